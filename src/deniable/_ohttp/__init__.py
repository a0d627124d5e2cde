"""Oblivious HTTP (RFC 9458) with Binary HTTP (RFC 9292): the messages, the gateway's keys, the relay.

Needs the ``ohttp`` extra (``pyhpke`` and ``cryptography``). Used by the
collection service (the gateway: :mod:`deniable.server._routes.gateway`),
the relay (``deniable relay``) and the device client
(:mod:`deniable.client`).
"""
