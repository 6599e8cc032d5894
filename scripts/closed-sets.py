#!/usr/bin/env python3
"""No word of a closed set outside the type that owns it.

The closed sets are the `db::text_enum!` types (order, payment and gift-code states, payment
and order types, roles, the trails' actions: docs/decisions.md, "Closed sets as types, and
waits below the grace"). Each of their words is written once, in its type; the code reads
and writes it through the type (`as_str`, a bind, a `match`), so that a renamed or added word
is one change that the compiler and the column's CHECK test follow.

This reads every non-test Rust source (tests may write the words: they check them), finds
each word in quotes ("word" or SQL's 'word'), and fails on any outside its `text_enum!`
block, except the places listed in ALLOWED with why. Run by `make test`; exits 1 with the
places, 0 with a count.
"""

import re
import subprocess
import sys

# (path, word): why the word stands there although a type owns it.
ALLOWED = {
    ("services/point-service/src/order_body.rs", "point"):
        "the spec's refusal text for payment_type, written once (scripts/code-shape.py)",
    ("services/point-service/src/order_body.rs", "checkout"):
        "the spec's refusal text for payment_type, written once (scripts/code-shape.py)",
    ("services/point-service/src/payments/machine.rs", "payment_failed"):
        "a sync outcome's metric label, of another set that happens to share the word",
    ("services/order-service/src/gift_cards/credit/report.rs", "credited"):
        "a credit attempt's metric label (outcome), not a stored state",
    ("services/point-service/src/payments/sync/reading.rs", "pending"):
        "what the payment service says of a payment, another set that happens to share the word",
    ("services/point-service/src/payments/webhook/mod.rs", "pending"):
        "a webhook event's outcome until it is decided, another set that shares the word",
    ("services/point-service/src/expiry/job.rs", "expired"):
        "a log line's verb, not a stored state",
    ("crates/server/src/audience.rs", "admin"):
        "the admin panel's document audience, not an operator role",
    ("crates/relayed-routes/src/orders.rs", "checkout"):
        "a document example of the body the app sends",
    ("services/point-service/src/reports/audit.rs", "initial_order"):
        "the ledger audit: an independent check written in SQL against the columns' words",
    ("services/point-service/src/reports/audit.rs", "payment_failed"):
        "the ledger audit: an independent check written in SQL against the columns' words",
    ("services/point-service/src/reports/audit.rs", "successful"):
        "the ledger audit: an independent check written in SQL against the columns' words",
    ("services/point-service/src/reports/audit.rs", "point"):
        "the ledger audit: an independent check written in SQL against the columns' words",
    ("services/point-service/src/reports/audit.rs", "checkout"):
        "the ledger audit: an independent check written in SQL against the columns' words",
}

SOURCES = ["crates/*/src/*.rs", "crates/*/src/**/*.rs", "services/*/src/*.rs",
           "services/*/src/**/*.rs"]
BLOCK = re.compile(r"text_enum!\s*\{(.*?)\n\}", re.S)
WORD = re.compile(r'=>\s*"([^"]+)"\s*,')


def sources():
    # Files git does not track yet count too (a new module is checked before its commit).
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                             *SOURCES], capture_output=True, text=True, check=True).stdout.split()
    # testkit is the tests' own crate (a dev-dependency only).
    return [p for p in listed
            if not re.search(r"(^|/)tests?(\.rs$|/)", p) and not p.startswith("crates/testkit/")]


def without_tests(text):
    """The text before the file's `#[cfg(test)] mod`: unit tests come last in a file."""
    found = re.search(r"^#\[cfg\(test\)\]\s*\n\s*mod ", text, re.M)
    return text[:found.start()] if found else text


def main():
    files = {path: without_tests(open(path, encoding="utf-8").read()) for path in sources()}
    words = set()
    for text in files.values():
        for block in BLOCK.findall(text):
            words.update(WORD.findall(block))
    quoted = re.compile(r"""["'](%s)["']""" % "|".join(map(re.escape, sorted(words))))
    found, allowed = [], 0
    for path, text in files.items():
        outside = BLOCK.sub(lambda m: "\n" * m.group(0).count("\n"), text)
        for number, line in enumerate(outside.split("\n"), 1):
            code = line.split("//", 1)[0] if not line.lstrip().startswith("//") else ""
            for word in quoted.findall(code):
                if (path, word) in ALLOWED:
                    allowed += 1
                else:
                    found.append(f"  {path}:{number}: {word!r}: {line.strip()}")
    if found:
        print("a closed set's word outside its type (use the type, or list the place in "
              "scripts/closed-sets.py with why):")
        print("\n".join(found))
        return 1
    print(f"closed sets: {len(words)} words, each only in its type "
          f"({allowed} listed places elsewhere, each with why)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
