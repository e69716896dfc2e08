"""The Python blocks of docs/clients/python.md (once the README's) run as they are, against the live server: the
walk-through (alone, as ``python3 example.py``), the terminal (after a session is made) and the asyncio one.

The blocks are read from the "Python client library" section of the repository's docs/clients/python.md.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unittest

from _support import API_KEY, ROOT, URL, live

SECTION_TITLE = "## Python client library"


def python_blocks() -> list:
    text = (ROOT.parent.parent / "docs" / "clients" / "python.md").read_text(encoding="utf-8")
    start = text.index(SECTION_TITLE)
    end = text.find("\n## ", start + len(SECTION_TITLE))
    text = text[start : end if end >= 0 else len(text)]
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def run(code: str) -> str:
    env = {**os.environ, "SANDBOXD_URL": URL, "SANDBOXD_API_KEY": API_KEY}
    if os.environ.get("SANDBOXD_TEST_INSTALLED") != "1":
        env["PYTHONPATH"] = str(ROOT / "src")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise AssertionError(f"exit code {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}")
    return done.stdout


@live
class ReadmeExamples(unittest.TestCase):
    def test_there_are_three_blocks(self) -> None:
        self.assertEqual(len(python_blocks()), 3)

    def test_the_walk_through_runs_as_it_is(self) -> None:
        output = run(python_blocks()[0])
        self.assertIn("42\n", output)
        self.assertIn("3 ", output)
        self.assertIn("b'hello'", output)
        self.assertIn("done\n", output)
        self.assertIn("sbx_sk_", output)

    def test_the_terminal_block_runs_in_a_session(self) -> None:
        prelude = "from sandboxd import Sandboxd\nclient = Sandboxd()\nsession = client.sessions.create(vcpu_count=1)\n"
        output = run(prelude + python_blocks()[1] + "session.kill()\n")
        self.assertIn("done-42", output)
        self.assertIn("TerminalExit(exit_code=3, signal=None)", output)

    def test_the_asyncio_block_runs_as_it_is(self) -> None:
        output = run(python_blocks()[2])
        self.assertIn("1\n 2\n", output)
        self.assertIn("done\n", output)
        self.assertRegex(output, r"\n[a-z_]+\.[a-z_.]+ \{", "an event: its type and its data")


if __name__ == "__main__":
    unittest.main()
