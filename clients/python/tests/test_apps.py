"""Apps: the folder ``apps.deploy`` packs (``tarfile``; the same rules as ``sandbox deploy`` and the TypeScript
client: no ``.git``, ``node_modules``, ``__pycache__``, nor what ``.sandboxdignore`` lists), and against the live
server one app deployed from a folder, followed to ``live``, served at its URL, listed, its logs read, redeployed,
rolled back and deleted (sync), with the asyncio client's reads beside it. Every answer is checked against
``sandboxd.models``."""

from __future__ import annotations

import asyncio
import http.client
import io
import tarfile
import tempfile
import unittest
import uuid
from pathlib import Path
from typing import List
from urllib.parse import urlsplit

from _support import ShapeAssertions, async_client, client, live, models, sandboxd
from sandboxd._app_folder import app_ignore_matcher, list_app_folder, pack_app_folder

#: A first deployment under TCG: a VM, the upload, a snapshot, the start and the health check.
DEPLOY_TIMEOUT = 900.0


def write(root: Path, relative: str, text: str = "x\n") -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def names_in(tarball: bytes) -> List[str]:
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        return sorted(member.name for member in archive.getmembers())


class AppFolder(unittest.TestCase):
    def test_the_folder_without_what_is_ignored(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            write(root, "sandboxd.yaml", "name: hello\nport: 8000\nstart: python3 app.py\n")
            for relative in ("app.py", "lib/util.py", "lib/__pycache__/u.pyc", ".git/HEAD", "web/node_modules/r/i.js"):
                write(root, relative)
            for relative in (
                "build/out.js",
                "src/build/kept.js",
                "logs/a.log",
                "keep.log",
                "docs/deep/er/n.tmp",
                ".env",
            ):
                write(root, relative)
            write(root, ".sandboxdignore", "# local files\n/build/\n*.log\n!keep.log\n**/er/*.tmp\n.env\n")
            expected = [
                ".sandboxdignore",
                "app.py",
                "docs",
                "docs/deep",
                "docs/deep/er",
                "keep.log",
                "lib",
                "lib/util.py",
                "logs",
                "sandboxd.yaml",
                "src",
                "src/build",
                "src/build/kept.js",
                "web",
            ]
            self.assertEqual(list_app_folder(root), expected)
            self.assertEqual(names_in(pack_app_folder(root)), expected)

    def test_the_rules_one_by_one(self) -> None:
        ignored = app_ignore_matcher("/build/\n*.log\n!keep.log\ndocs/**/x\n[ab].txt\n")
        self.assertTrue(ignored("build", True))
        self.assertFalse(ignored("build", False), "a trailing slash: directories only")
        self.assertFalse(ignored("src/build", True), "a leading slash anchors at the folder")
        self.assertTrue(ignored("deep/a.log", False))
        self.assertFalse(ignored("deep/keep.log", False), "! re-includes")
        self.assertTrue(ignored("docs/x", False))
        self.assertTrue(ignored("docs/a/b/x", False))
        self.assertTrue(ignored("a.txt", False))
        self.assertFalse(ignored("c.txt", False))
        self.assertTrue(ignored("x/node_modules", True))

    def test_a_folder_without_a_manifest_is_refused_before_anything_is_sent(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            with self.assertRaisesRegex(ValueError, "no sandboxd.yaml"):
                sandboxd.Sandboxd(api_key="sbx_unused", base_url="http://127.0.0.1:9").apps.deploy(folder)


@live
class Apps(ShapeAssertions):
    @classmethod
    def setUpClass(cls) -> None:
        cls.client = client(timeout=DEPLOY_TIMEOUT)
        cls.name = f"py-{uuid.uuid4().hex[:8]}"
        cls.folder = tempfile.TemporaryDirectory()
        root = Path(cls.folder.name)
        write(root, "sandboxd.yaml", "port: 8000\nstart: python3 -m http.server 8000\nhealth_check: /\n")
        write(root, "index.html", "py v1\n")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.folder.cleanup()

    def page(self, url: str) -> str:
        """What the app's URL answers (its Host header names the app: *.localhost may not resolve here)."""
        parts = urlsplit(url)
        connection = http.client.HTTPConnection("127.0.0.1", parts.port or 80, timeout=30)
        try:
            connection.request("GET", "/", headers={"host": parts.netloc})
            answer = connection.getresponse()
            return f"{answer.status} {answer.read().decode()}"
        finally:
            connection.close()

    def test_deploy_redeploy_rollback_delete(self) -> None:
        apps = self.client.apps
        accepted = apps.deploy(self.folder.name, name=self.name)
        self.assertShape(accepted, models.AppDeploymentAccepted)
        app, deployment = accepted["app"], accepted["deployment"]
        self.assertEqual((app["name"], deployment["version"]), (self.name, 1))
        lines: List[str] = []
        done = apps.wait_for_deployment(self.name, 1, on_line=lines.append)
        self.assertShape(done, models.DeploymentRecord)
        self.assertEqual(done["status"], "live", done["error"])
        self.assertTrue(lines, "the deployment's log was followed")
        self.assertEqual(self.page(app["url"]), "200 py v1\n")

        self.assertIn(self.name, [a["name"] for a in apps.list()])
        self.assertShape(apps.get(self.name), models.AppRecord)
        self.assertNotEqual(apps.deployment_logs(self.name, 1), "")
        self.assertIn('"GET / HTTP/1.1" 200', apps.logs(self.name))

        # The asyncio client reads the same app.
        async def reads() -> None:
            async with async_client() as aclient:
                self.assertEqual((await aclient.apps.get(self.name))["live_version"], 1)
                self.assertEqual([d["version"] for d in await aclient.apps.deployments(self.name)], [1])

        asyncio.run(reads())

        write(Path(self.folder.name), "index.html", "py v2\n")
        again = apps.deploy(Path(self.folder.name), name=self.name)
        self.assertEqual(again["deployment"]["version"], 2)
        self.assertEqual(apps.wait_for_deployment(self.name, 2)["status"], "live")
        self.assertEqual(self.page(app["url"]), "200 py v2\n")

        back = apps.rollback(self.name, version=1)
        self.assertShape(back, models.AppDeploymentAccepted)
        self.assertEqual(apps.wait_for_deployment(self.name, 1)["status"], "live")
        self.assertEqual(self.page(app["url"]), "200 py v1\n")
        self.assertEqual(apps.get(self.name)["live_version"], 1)
        self.assertEqual([d["version"] for d in apps.deployments(self.name)], [2, 1])

        apps.delete(self.name)
        with self.assertRaises(sandboxd.NotFoundError):
            apps.get(self.name)
        self.assertFalse(self.page(app["url"]).startswith("200 "))


if __name__ == "__main__":
    unittest.main()
