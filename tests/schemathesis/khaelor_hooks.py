"""Schemathesis hooks for tests/reliability_schema.rs (loaded with SCHEMATHESIS_HOOKS).

A schema can say that `projectRoot` is an absolute path; it cannot say that the path
exists, and a random one never does, so nearly every generated call would stop at
404 `missing_project_root`. Three in four schema-valid project roots (and cwds) are
replaced by the real project the test made (KHAELOR_PROJECT), so the checks reach
analysis, decisions and the session flow. A value is replaced only when it is
already valid for the schema (absolute, no control character), so a negative case
stays negative.
"""

import os
import re
import zlib

import schemathesis

ROOT = os.environ["KHAELOR_PROJECT"]
ABSOLUTE = re.compile(r"/[^\x00-\x1f\x7f-\x9f]*")


def _real(value):
    """The test's project for most schema-valid absolute paths, else the value."""
    if isinstance(value, str) and ABSOLUTE.fullmatch(value):
        if zlib.crc32(value.encode("utf-8", "surrogatepass")) % 4 != 0:
            return ROOT
    return value


@schemathesis.hook
def map_body(ctx, body):
    if isinstance(body, dict):
        for key in ("projectRoot", "cwd"):
            if key in body:
                body[key] = _real(body[key])
    return body


@schemathesis.hook
def map_query(ctx, query):
    if isinstance(query, dict) and "projectRoot" in query:
        query["projectRoot"] = _real(query["projectRoot"])
    return query
