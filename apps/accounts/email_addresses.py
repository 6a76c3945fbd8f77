"""The one rule for an email address as an identity: what is accepted, and the form it is stored and compared in.

An address is accepted only when the mail path can deliver to it as written: the part before the @
must be plain ASCII (SMTP without the SMTPUTF8 extension carries nothing else, and Unicode case
rules would fold "\u017ftan" (a long s) onto "stan"), and the domain is stored as its IDNA A-label (UTS 46
mapping: case folded, "Bücher.example" and "bücher.example" both become "xn--bcher-kva.example").
The local part is lower-cased: the account is the same whatever case it is typed in.
"""

from __future__ import annotations

import idna

# The longest address SMTP can carry (RFC 5321's path limit, less the angle brackets).
EMAIL_MAX_LENGTH = 254
_LOCAL_PART_MAX_LENGTH = 64
# RFC 5322's dot-atom text: the characters a local part may use without quoting. Quoted local parts
# ("a b"@example.org) are valid but no mail client a learner uses produces them, so they are refused.
_ATOM_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-/=?^_`{|}~")


class EmailRefused(ValueError):
    """The address cannot be an account's email; the message says why, for the learner."""


def email_canonical(value: str) -> str:
    """The stored form of an address; raises EmailRefused for one the mail path cannot deliver to."""
    local, at, domain = value.strip().rpartition("@")
    if not at or not local or not domain:
        raise EmailRefused("Enter an email address such as name@example.org.")
    if not local.isascii():
        raise EmailRefused(
            "Use an address whose part before the @ is plain ASCII (letters a-z, digits and .!#$%&'*+-/=?^_`{|}~)."
        )
    local = local.lower()
    atoms = local.split(".")
    if len(local) > _LOCAL_PART_MAX_LENGTH or any(not atom or set(atom) - _ATOM_CHARACTERS for atom in atoms):
        raise EmailRefused("Enter an email address such as name@example.org.")
    try:
        domain = idna.encode(domain, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        raise EmailRefused("The part after the @ is not a domain name.") from None
    if "." not in domain:
        raise EmailRefused("The part after the @ is not a domain name.")
    address = f"{local}@{domain}"
    if len(address) > EMAIL_MAX_LENGTH:
        raise EmailRefused(f"Enter an address of at most {EMAIL_MAX_LENGTH} characters.")
    return address


def email_key(value: str) -> str:
    """The form an address is counted and looked up in: its canonical form, or for one the rule refuses
    (typed at sign-in, or stored before the rule) trimmed and lower-cased, which matches no new account."""
    try:
        return email_canonical(value)
    except EmailRefused:
        return value.strip().lower()
