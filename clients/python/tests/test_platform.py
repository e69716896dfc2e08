"""The rest of the surface that needs no VM, on the live server, every answer checked against
``sandboxd.models``: webhooks, audit, volumes, templates and snapshots, the browser's account operations and
stored credentials, shares and custom domains, vaults (no answer carries a secret's value), the command-line login
(PKCE), bearer tokens."""

from __future__ import annotations

import os
import typing
import unittest
import uuid

from _support import URL, ShapeAssertions, client, live, models, sandboxd

USERNAME = os.environ.get("SANDBOXD_TEST_USERNAME") or ""
PASSWORD = os.environ.get("SANDBOXD_TEST_PASSWORD") or ""


@live
class Platform(ShapeAssertions):
    @classmethod
    def setUpClass(cls) -> None:
        cls.client = client()

    def test_webhook_endpoints_and_deliveries(self) -> None:
        hooks = self.client.webhooks
        # An address literal: nothing is resolved or sent (no delivery is asked for here).
        endpoint = hooks.endpoints.create(url="https://203.0.113.7/hook", event_patterns=["vm.*"], description="py")
        self.assertShape(endpoint, models.WebhookEndpoint)
        self.assertTrue(endpoint["secret"].startswith("whsec_"))
        try:
            self.assertIn(endpoint["id"], [e["id"] for e in hooks.endpoints.list()])
            self.assertShape(hooks.endpoints.get(endpoint["id"]), models.WebhookEndpoint)
            changed = hooks.endpoints.update(endpoint["id"], event_patterns=["vm.*", "*.failed"], enabled=False)
            self.assertEqual((changed["event_patterns"], changed["enabled"]), (["vm.*", "*.failed"], False))
            rotated = hooks.endpoints.rotate_secret(endpoint["id"])
            self.assertShape(rotated, models.WebhookSecretRotation)
            self.assertNotEqual(rotated["secret"], endpoint["secret"])
            with self.assertRaises(sandboxd.SandboxdError) as disabled:
                hooks.endpoints.test(endpoint["id"])  # a disabled endpoint gets no test event
            self.assertEqual((disabled.exception.status, disabled.exception.code), (409, "CONFLICT"))
            self.assertShape(hooks.deliveries.list(endpoint_id=endpoint["id"], limit=5), models.WebhookDeliveryList)
        finally:
            self.assertShape(hooks.endpoints.delete(endpoint["id"]), models.DeleteV1WebhooksEndpointsEndpointIdResponse)
        with self.assertRaises(sandboxd.NotFoundError):
            hooks.endpoints.get(endpoint["id"])
        with self.assertRaises(sandboxd.NotFoundError):
            hooks.deliveries.get("whd_nothing")

    def test_audit_volumes_templates_and_snapshots(self) -> None:
        self.assertShape(self.client.audit.list(limit=5), models.AuditEventList)
        volume = self.client.volumes.create(name=f"py-{uuid.uuid4().hex[:8]}", size_mb=1024)
        self.assertShape(volume, models.VolumeRecord)
        self.assertShape(self.client.volumes.get(volume["volume_id"]), models.VolumeRecord)
        self.assertIn(volume["volume_id"], [v["volume_id"] for v in self.client.volumes.list()])
        self.client.volumes.delete(volume["volume_id"])
        with self.assertRaises(sandboxd.NotFoundError):
            self.client.volumes.get(volume["volume_id"])
        with self.assertRaises(TypeError):
            self.client.volumes.create(name="both", size_gb=1, size_mb=1024)
        templates = self.client.templates.list()
        self.assertShape(templates, models.GetV1TemplatesResponse)
        builtin = [t for t in templates if t["name"] == "default"]
        self.assertEqual(len(builtin), 1)
        self.assertShape(self.client.templates.get(builtin[0]["template_id"]), models.TemplateRecord)
        self.assertShape(self.client.snapshots.list(), models.GetV1SnapshotsResponse)
        with self.assertRaises(sandboxd.NotFoundError):
            self.client.snapshots.get("snap_nothing")

    def test_the_browsers_account_operations_and_credentials(self) -> None:
        browser = self.client.browser
        self.assertShape(browser.capabilities(), models.BrowserCapabilities)
        self.assertShape(browser.usage(), models.BrowserUsageSummary)
        self.assertShape(browser.usage_history(limit=5), models.BrowserUsageHistory)
        self.assertShape(browser.auth_test(), models.BrowserAuthTestResponse)
        self.assertShape(browser.list_sessions(), typing.List[models.BrowserSessionResponse])
        self.assertFalse(browser.close_session("bs_nothing"), "already closed: False, not an error")
        with self.assertRaises(sandboxd.BrowserSessionError):
            browser.session("bs_nothing").navigate("https://example.com")
        credential = browser.credentials.create(
            name=f"py-{uuid.uuid4().hex[:8]}", username="me", password="secret", allowed_hosts=["example.com"]
        )
        self.assertShape(credential, models.BrowserCredentialRecord)
        self.assertNotIn("password", credential)
        changed = browser.credentials.update(credential["credential_id"], allowed_hosts=["*.example.com"])
        self.assertEqual(changed["allowed_hosts"], ["*.example.com"])
        self.assertIn(credential["credential_id"], [c["credential_id"] for c in browser.credentials.list()])
        browser.credentials.delete(credential["credential_id"])
        with self.assertRaises(sandboxd.NotFoundError):
            browser.credentials.get(credential["credential_id"])

    def test_shares_and_custom_domains_without_a_vm(self) -> None:
        session = self.client.sessions.create()
        share = self.client.shares.create(session_id=session.id, port=8080, expires_in_seconds=600)
        self.assertShape(share, models.Share)
        self.assertFalse(share["is_public"])
        self.assertIn("sandboxd_token=", share["url"], "a private share's link is signed")
        domain = self.client.custom_domains.create(
            domain=f"py-{uuid.uuid4().hex[:8]}.example.com", share_id=share["share_id"]
        )
        self.assertShape(domain, models.CustomDomain)
        self.assertEqual(domain["status"], "pending")
        checked = self.client.custom_domains.verify(domain["id"])  # no TXT record (no DNS here): still pending
        self.assertEqual(checked["status"], "pending")
        self.assertTrue(checked["last_error"])
        self.assertIn(domain["id"], [d["id"] for d in self.client.custom_domains.list()])
        self.assertShape(self.client.custom_domains.delete(domain["id"]), models.CustomDomain)
        with self.assertRaises(sandboxd.NotFoundError):  # app_id is sent: an app that is not yours is a 404
            self.client.custom_domains.create(domain=f"py-app-{uuid.uuid4().hex[:8]}.example.com", app_id="no-such-app")
        self.assertShape(self.client.shares.delete(share["share_id"]), models.Share)
        self.assertShape(
            self.client.sessions.connect(session.id).details(), models.GetV1SessionsSessionSessionIdResponse
        )

    def test_vaults_and_their_secrets_without_a_vm(self) -> None:
        vaults = self.client.vaults
        value, rotated = f"sk-py-{uuid.uuid4().hex}", f"sk-py-rotated-{uuid.uuid4().hex}"
        name = f"py-{uuid.uuid4().hex[:8]}"
        vault = vaults.create(
            name,
            description="py",
            secrets=[{"name": "API_TOKEN", "value": value, "allowed_hosts": ["api.example.com"]}],
        )
        self.assertShape(vault, models.Vault)
        self.assertTrue(vault["id"].startswith("vlt_"))
        self.assertEqual(
            [(s["name"], s["allowed_hosts"]) for s in vault["secrets"]], [("API_TOKEN", ["api.example.com"])]
        )
        answers = [vault]
        try:
            listed = vaults.list()
            self.assertShape(listed, typing.List[models.Vault])
            self.assertIn(vault["id"], [v["id"] for v in listed])
            self.assertShape(vaults.get(vault["id"]), models.Vault)
            changed = vaults.update(vault["id"], name=f"{name}-2", description=None)
            self.assertEqual((changed["name"], changed["description"]), (f"{name}-2", None))
            secret = vaults.set_secret(
                vault["id"], "API_TOKEN", value=rotated, allowed_hosts=["api.example.com", "*.example.org"]
            )
            self.assertShape(secret, models.VaultSecret)
            self.assertEqual(secret["allowed_hosts"], ["api.example.com", "*.example.org"])
            self.assertEqual(secret["inject"], {"type": "bearer"})
            extra = vaults.set_secret(
                vault["id"],
                "EXTRA",
                value=value,
                allowed_hosts=["x.example.com"],
                inject={"type": "header", "name": "Authorization", "prefix": "token "},
            )
            self.assertShape(extra, models.VaultSecret)
            self.assertEqual(extra["inject"], {"type": "header", "name": "Authorization", "prefix": "token "})
            self.assertIsNone(vaults.delete_secret(vault["id"], "EXTRA"))
            with self.assertRaises(sandboxd.NotFoundError):
                vaults.delete_secret(vault["id"], "EXTRA")
            with self.assertRaises(sandboxd.ValidationError):
                vaults.set_secret(vault["id"], "BAD-NAME", value=value, allowed_hosts=["x.example.com"])
            page = vaults.request_logs(vault["id"], outcome="flagged", vm_id="vm-nothing", limit=5)
            self.assertShape(page, models.VaultRequestLogList)
            self.assertEqual(page, {"items": [], "next_cursor": None})
            shown = vaults.get(vault["id"])
            self.assertEqual([s["name"] for s in shown["secrets"]], ["API_TOKEN"])
            answers += [listed, changed, secret, page, shown]
            if os.environ.get("SANDBOXD_TEST_EGRESS_ENFORCED") == "1":
                session = self.client.sessions.create(vault_ids=[vault["id"]])
                details = self.client.sessions.info(session.id)
                self.assertIn("API_TOKEN", details["env_keys"])
                answers.append(details)
            else:  # a server without egress enforcement refuses vault_ids
                with self.assertRaises(sandboxd.SandboxdError) as refused:
                    self.client.sessions.create(vault_ids=[vault["id"]])
                self.assertEqual(refused.exception.status, 503)
        finally:
            self.assertIsNone(vaults.delete(vault["id"]))
        with self.assertRaises(sandboxd.NotFoundError):
            vaults.get(vault["id"])
        for answer in answers:
            self.assertNotIn(value, repr(answer))
            self.assertNotIn(rotated, repr(answer))

    def test_the_command_line_login_hands_out_a_key_once(self) -> None:
        pair = sandboxd.create_pkce_pair()
        self.assertEqual(len(pair.code_verifier), 43)
        anonymous = sandboxd.Sandboxd(api_key="", base_url=URL)
        started = anonymous.cli_auth.start(hostname="py-test-host", code_challenge=pair.code_challenge)
        self.assertShape(started, models.CLIAuthStartResponse)
        with self.assertRaises(sandboxd.SandboxdError) as pending:
            anonymous.cli_auth.exchange(device_code=started["device_code"], code_verifier=pair.code_verifier)
        self.assertEqual(pending.exception.code, "CLI_AUTH_PENDING")
        approved = self.client.cli_auth.approve(started["user_code"])
        self.assertShape(approved, models.CLIAuthApproveResponse)
        polls = []
        issued = anonymous.cli_auth.wait_for_key(
            device_code=started["device_code"],
            code_verifier=pair.code_verifier,
            interval=started["interval"],
            expires_in=started["expires_in"],
            on_pending=lambda interval, n: polls.append(interval),
        )
        self.assertShape(issued, models.CLIAuthExchangeResponse)
        self.assertEqual(issued["description"], "CLI - py-test-host")
        self.assertGreaterEqual(len(polls), 1)
        self.assertTrue(sandboxd.Sandboxd(api_key=issued["api_key"], base_url=URL).api_keys.check())
        with self.assertRaises(sandboxd.SandboxdError) as used:
            anonymous.cli_auth.exchange(device_code=started["device_code"], code_verifier=pair.code_verifier)
        self.assertEqual(used.exception.code, "CLI_AUTH_ALREADY_USED")
        self.client.api_keys.delete(issued["api_key_id"])

    @unittest.skipUnless(USERNAME and PASSWORD, "set SANDBOXD_TEST_USERNAME and SANDBOXD_TEST_PASSWORD")
    def test_a_bearer_token_from_a_password_works_like_a_key(self) -> None:
        token = sandboxd.Sandboxd(api_key="", base_url=URL).auth.token(username=USERNAME, password=PASSWORD)
        self.assertShape(token, models.PostV1AuthTokenResponse)
        bearer = sandboxd.Sandboxd(api_key="", access_token=token["access_token"], base_url=URL)
        self.assertTrue(bearer.has_credentials)
        self.assertShape(bearer.api_keys.list(), models.GetV1ApiKeysResponse)
        with self.assertRaises(sandboxd.AuthenticationError):
            sandboxd.Sandboxd(api_key="", base_url=URL).auth.token(username=USERNAME, password="wrong-password")


if __name__ == "__main__":
    unittest.main()
