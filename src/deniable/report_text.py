"""Reports as the text of a table column: moved to :mod:`deniable.wire.text` (this path re-exports it)."""

from deniable.wire.text import (
    NO_WORDS,
    YES_WORDS,
    all_json_strings,
    from_text,
    parse_yes_no,
    plain_reports,
    to_text,
    yes_no_labels,
)

__all__ = [
    "YES_WORDS", "NO_WORDS", "parse_yes_no", "yes_no_labels", "plain_reports", "to_text", "from_text",
    "all_json_strings",
]
