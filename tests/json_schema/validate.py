#!/usr/bin/env python3
"""Validates gpuprov's JSON documents against their schemas in docs/schemas (issue 20 item 2).

Usage: validate.py SCHEMA FILE...
SCHEMA is a path, or a name (plan, apply, verify, doctor, status, facts, saved-plan) looked up in
docs/schemas next to this repository. Each FILE must hold exactly one JSON document. The schemas
are checked against draft 7 first, and their references to each other (plan.schema.json#/...)
are resolved from the same directory, so a broken schema fails loudly instead of passing all.
Exit 0 when every FILE validates, 1 otherwise (each error printed with its JSON path), 2 on usage.

Written for Debian 12's python3-jsonschema (4.10): RefResolver, which later versions deprecate
but still have.
"""
import json
import os
import pathlib
import sys
import warnings

import jsonschema

SCHEMAS = pathlib.Path(__file__).resolve().parent.parent.parent / "docs" / "schemas"


def schema_path(arg):
    p = pathlib.Path(arg)
    if p.suffix == ".json" or os.sep in arg:
        return p.resolve()
    return SCHEMAS / f"{arg}.schema.json"


def validator_for(path):
    schema = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        resolver = jsonschema.RefResolver(base_uri=path.as_uri(), referrer=schema)
    return jsonschema.Draft7Validator(schema, resolver=resolver)


def report(name, schema_name, error, depth=0):
    """The error, and under an anyOf/oneOf/allOf the errors of each branch (the one that says
    which field is wrong is among them)."""
    where = "/".join(str(p) for p in error.absolute_path) or "(top)"
    message = error.message if not error.context else f"fails {error.validator}"
    print(f"{name}: {schema_name}: {'  ' * depth}at {where}: {message}")
    for sub in sorted(error.context, key=lambda e: list(e.absolute_path)):
        report(name, schema_name, sub, depth + 1)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    path = schema_path(argv[1])
    validator = validator_for(path)
    bad = 0
    for name in argv[2:]:
        try:
            with open(name, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{name}: not a JSON document: {e}")
            bad += 1
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errors:
            report(name, path.name, e)
        if errors:
            bad += 1
        else:
            print(f"{name}: valid against {path.name}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
