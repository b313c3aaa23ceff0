"""Validates GraphQL request bodies against a schema with graphql-core.

    check_graphql.py SCHEMA.graphql QUERIES.json

QUERIES.json is a list of request bodies ({"query": ..., "variables": ...}). Each query must
parse and validate against the schema, and its variables must be ones the query declares, of
the types it declares. Prints "N queries valid" or each error, and exits 1 on any error.
"""
import json
import sys

from graphql import build_schema, parse, validate
from graphql.execution.values import get_variable_values


def main():
    # GitHub's published SDL defines a field twice (EnterpriseOwnerInfo): the schema is taken as
    # it is, each query is validated in full.
    schema = build_schema(open(sys.argv[1], encoding="utf-8").read(), assume_valid_sdl=True)
    bodies = json.load(open(sys.argv[2], encoding="utf-8"))
    failed = 0
    for n, body in enumerate(bodies):
        document = parse(body["query"])
        errors = validate(schema, document)
        if not errors:
            operation = document.definitions[0]
            declared = {v.variable.name.value for v in operation.variable_definitions}
            extra = set(body.get("variables", {})) - declared
            coerced = get_variable_values(
                schema, operation.variable_definitions, body.get("variables", {})
            )
            errors = list(coerced) if isinstance(coerced, list) else []
            if extra:
                errors.append("variables not declared: " + ", ".join(sorted(extra)))
        for e in errors:
            failed += 1
            print(f"query {n}: {e}")
    if failed:
        sys.exit(1)
    print(f"{len(bodies)} queries valid")


main()
