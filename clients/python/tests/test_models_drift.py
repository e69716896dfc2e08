"""``sandboxd/models.py`` is exactly what ``scripts/generate_types.py`` makes of the OpenAPI document the live
server serves, and of the one the server writes to ``packages/server/openapi.json`` (which the server's own test
keeps equal to the served one): a route or schema change without regenerating it fails here."""

from __future__ import annotations

import json
import unittest
import urllib.request

from _support import ROOT, URL, live
from test_generated import load_script

MODELS = ROOT / "src" / "sandboxd" / "models.py"
#: The document the server writes (``npm run generate -w @sandboxd/sdk``); absent outside the repository.
WRITTEN_DOCUMENT = ROOT.parent.parent / "packages" / "server" / "openapi.json"


def assert_models_match(case: unittest.TestCase, document: dict, source: str) -> None:
    expected = load_script("generate_types").render(document)
    actual = MODELS.read_text(encoding="utf-8")
    if actual == expected:
        return
    a, e = actual.split("\n"), expected.split("\n")
    line = next((i for i, (x, y) in enumerate(zip(a, e)) if x != y), min(len(a), len(e)))
    case.fail(
        "clients/python/src/sandboxd/models.py is stale: run npm run generate -w @sandboxd/sdk "
        f"(or python3 clients/python/scripts/generate_types.py {source}) and commit the result.\n"
        f"First difference at line {line + 1}:\n"
        f"  checked in: {a[line] if line < len(a) else '(end of file)'}\n"
        f"  generated:  {e[line] if line < len(e) else '(end of file)'}"
    )


@live
class ModelsDrift(unittest.TestCase):
    def test_models_match_the_served_openapi_document(self) -> None:
        with urllib.request.urlopen(f"{URL}/openapi.json", timeout=60) as response:
            document = json.loads(response.read().decode("utf-8"))
        assert_models_match(self, document, f"{URL}/openapi.json")


@unittest.skipUnless(WRITTEN_DOCUMENT.is_file(), "packages/server/openapi.json is not here (an installed copy)")
class WrittenDocumentDrift(unittest.TestCase):
    def test_models_match_the_written_openapi_document(self) -> None:
        document = json.loads(WRITTEN_DOCUMENT.read_text(encoding="utf-8"))
        assert_models_match(self, document, "packages/server/openapi.json")


if __name__ == "__main__":
    unittest.main()
