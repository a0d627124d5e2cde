"""The devices of surveys with rounds in the database: their accounts and each round's aggregates.

Within a request's transaction, with the survey's writers locked out
(:mod:`deniable.server._writes`), :meth:`DeviceBook.charge` reads the
accounts of the request's devices (by the keyed hash of each device key,
:func:`deniable.server._rounds.device_hash`), lets a
:class:`~deniable.server._ledger.Ledger` charge every response, writes the
accounts back and adds the responses to this round's aggregates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, bindparam, insert, select, update

from deniable.server._database import (
    device_salts_table,
    devices_table,
    read_stat,
    round_aggregates_table,
    stat_bytes,
)
from deniable.server._ledger import Account, Ledger, current_round, questions_answered
from deniable.server._rounds import device_hash
from deniable.server._submissions import Prepared
from deniable.server._surveys import Survey
from deniable.wire import MAX_BATCH

__all__ = ["DeviceBook"]

_IN_CHUNK = MAX_BATCH  # keys per IN (...) query (SQLite >= 3.32 allows 32766 parameters)
_ra = round_aggregates_table.c
_SELECT_SALT = select(device_salts_table.c.salt).where(device_salts_table.c.survey_id == bindparam("sid"))
_SELECT_ROUND_AGGREGATES = select(_ra.question_id, _ra.stat).where(
    _ra.survey_id == bindparam("sid"), _ra.round == bindparam("round")
)
_UPDATE_ROUND_AGGREGATE = (
    update(round_aggregates_table)
    .where(_ra.survey_id == bindparam("sid"), _ra.round == bindparam("rnd"), _ra.question_id == bindparam("qid"))
    .values(stat=bindparam("new_stat"))
)


class DeviceBook:
    """Device accounts in one database; ``mark`` is its driver's parameter mark (``?`` or ``%s``).

    ``clock`` gives the time (seconds since the epoch) that decides the round.
    """

    def __init__(self, mark: str, clock: Callable[[], float]) -> None:
        self.clock = clock
        self._mark = mark
        # straight through the driver, as the responses are (no per-row parameter processing)
        self._select_sql = (
            f"SELECT device, last_round, reports, spent, spent_fresh FROM {devices_table.name} "
            f"WHERE survey_id = {mark} AND device IN "
        )
        self._insert_sql = (
            f"INSERT INTO {devices_table.name} (survey_id, device, last_round, reports, spent, spent_fresh) "
            f"VALUES ({', '.join([mark] * 6)})"
        )
        self._update_sql = (
            f"UPDATE {devices_table.name} SET last_round = {mark}, reports = {mark}, spent = {mark}, "
            f"spent_fresh = {mark} WHERE survey_id = {mark} AND device = {mark}"
        )
        self._salts: dict[str, bytes] = {}

    def _salt(self, conn: Connection, survey_id: str) -> bytes:
        salt = self._salts.get(survey_id)
        if salt is None:
            text = conn.execute(_SELECT_SALT, {"sid": survey_id}).scalar_one()
            salt = self._salts[survey_id] = bytes.fromhex(text)
        return salt

    def _accounts(self, conn: Connection, survey_id: str, devices: Sequence[str]) -> dict[str, Account]:
        """The stored account of each of ``devices`` that has one."""
        found: dict[str, Account] = {}
        for start in range(0, len(devices), _IN_CHUNK):
            chunk = devices[start : start + _IN_CHUNK]
            sql = self._select_sql + f"({', '.join([self._mark] * len(chunk))})"
            for device, last, reports, eps, eps_fresh in conn.exec_driver_sql(sql, (survey_id, *chunk)).fetchall():
                found[device] = Account(last, reports, eps, eps_fresh)
        return found

    def charge(
        self, conn: Connection, survey: Survey, p: Prepared, new: list[int], where: Callable[[int], str],
        added: Mapping[str, Any],
    ) -> None:
        """Charge the responses ``new`` to their devices; add ``added`` to this round's aggregates.

        Refuses (the whole request rolls back) what the
        :class:`~deniable.server._ledger.Ledger` refuses: a response before
        the first round, a device's second response in a round, a report
        over its lifetime budget.
        """
        assert p.devices is not None
        current = current_round(survey, self.clock())
        salt = self._salt(conn, survey.id)
        hashes = {i: device_hash(salt, p.devices[i]) for i in new}
        devices = list(dict.fromkeys(hashes.values()))
        stored = self._accounts(conn, survey.id, devices)
        ledger = Ledger(survey, current, stored)
        answered = questions_answered([q.id for q in survey.questions], p.answered, new)
        for i in new:
            ledger.charge(hashes[i], answered[i], where(i))
        inserts, updates = [], []
        for device in devices:
            a = ledger.accounts[device]
            values = (a.last_round, a.reports, a.spent, a.spent_fresh)
            if device in stored:
                updates.append((*values, survey.id, device))
            else:
                inserts.append((survey.id, device, *values))
        if inserts:
            conn.exec_driver_sql(self._insert_sql, inserts)
        if updates:
            conn.exec_driver_sql(self._update_sql, updates)
        self._add_to_round(conn, survey, current, added)

    def _add_to_round(self, conn: Connection, survey: Survey, current: int, added: Mapping[str, Any]) -> None:
        this_round = dict(conn.execute(_SELECT_ROUND_AGGREGATES, {"sid": survey.id, "round": current}).all())
        inserts, updates = [], []
        for qid, part in added.items():
            if qid in this_round:
                merged = read_stat(survey.question(qid), this_round[qid]) + part
                updates.append({"sid": survey.id, "rnd": current, "qid": qid, "new_stat": stat_bytes(merged)})
            else:
                inserts.append({"survey_id": survey.id, "round": current, "question_id": qid,
                                "stat": stat_bytes(part)})
        if inserts:
            conn.execute(insert(round_aggregates_table), inserts)
        if updates:
            conn.execute(_UPDATE_ROUND_AGGREGATE, updates)
