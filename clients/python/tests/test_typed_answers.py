"""Answers as typed objects (no VMs): each answer is its operation's model from ``sandboxd.models``, read by
attribute or by key, nested objects and lists of objects too; ``to_dict()`` is the JSON as it came; a model
equals the same dict; a model sent back in a request body goes as its JSON."""

from __future__ import annotations

import asyncio
import copy
import json
import pickle
import unittest

from _support import models, sandboxd
from test_transport import FakeServer, send_json

EXECUTED = {
    "stdout": "2\n",
    "stderr": "",
    "exit_code": 0,
    "execution_time": 0.01,
    "cpu_time": 0.0,
    "execution_id": 7,
    "session_id": "s-1",
    "vm_id": "vm-1",
    "status": "completed",
    "stdout_truncated": False,
    "stderr_truncated": False,
    "results": [{"is_main_result": True, "text": "2", "png": "iVBORw0KGgo="}],
    "exception": None,
    "context_id": "default",
    "added_by_a_newer_server": 1,
}
PAGE = {"items": [{"id": "wd_1", "status": "failed"}, {"id": "wd_2", "status": "pending"}], "next_cursor": None}


class TypedAnswers(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    def setUp(self) -> None:
        self.fake.seen = []
        self.client = sandboxd.Sandboxd(api_key="k", base_url=self.fake.url)

    def tearDown(self) -> None:
        self.client.close()

    def test_an_answer_reads_by_attribute_and_by_key_nested_objects_too(self) -> None:
        self.fake.reply = lambda handler, n: send_json(handler, 200, EXECUTED)
        result = self.client.execute("1 + 1", session_id="s-1")
        self.assertIsInstance(result, models.ExecuteResponse)
        self.assertEqual((result.stdout, result["stdout"], result.get("stdout")), ("2\n", "2\n", "2\n"))
        self.assertIsInstance(result.results[0], models.RichResult)
        self.assertEqual((result.results[0].png, result["results"][0]["png"]), ("iVBORw0KGgo=",) * 2)
        self.assertIsNone(result.results[0].html, "a field this answer left out reads as None")
        self.assertIsNone(result.exception)
        self.assertEqual(result.added_by_a_newer_server, 1, "a key the model does not know is still there")
        with self.assertRaises(AttributeError):
            result.no_such_field
        with self.assertRaises(KeyError):
            result["no_such_field"]
        self.assertIn("stdout", result)
        self.assertEqual(len(result), len(EXECUTED))
        self.assertEqual(list(result), list(EXECUTED))
        with self.assertRaises(AttributeError):
            result.stdout = "changed"  # type: ignore[misc]

    def test_to_dict_is_the_json_as_it_came_and_a_model_equals_it(self) -> None:
        self.fake.reply = lambda handler, n: send_json(handler, 200, EXECUTED)
        result = self.client.execute("1 + 1", session_id="s-1")
        self.assertEqual(result.to_dict(), EXECUTED)
        self.assertEqual(json.loads(json.dumps(result.to_dict())), EXECUTED)
        self.assertEqual(result, EXECUTED)
        self.assertEqual(EXECUTED, result)
        self.assertEqual(dict(result)["stdout"], "2\n")
        self.assertEqual({**result}["execution_id"], 7)
        self.assertNotEqual(result, {**EXECUTED, "stdout": "3\n"})
        self.assertIn("ExecuteResponse({", repr(result))
        self.assertEqual(pickle.loads(pickle.dumps(result)), result)
        self.assertEqual(copy.deepcopy(result).results[0].text, "2")
        with self.assertRaises(TypeError):
            json.dumps(result)  # not a dict: to_dict() first (the README says so)

    def test_a_field_named_items_is_a_field(self) -> None:
        self.fake.reply = lambda handler, n: send_json(handler, 200, PAGE)
        page = self.client.webhooks.deliveries.list()
        self.assertIsInstance(page, models.WebhookDeliveryList)
        self.assertEqual([d.id for d in page.items], ["wd_1", "wd_2"])
        self.assertIsInstance(page["items"][1], models.WebhookDelivery)
        self.assertEqual(page.to_dict()["items"][1]["status"], "pending")

    def test_a_list_answer_is_a_list_of_models(self) -> None:
        record = {"vm_id": "vm-1", "status": "running"}
        self.fake.reply = lambda handler, n: send_json(handler, 200, [record])
        vms = self.client.vms.list()
        self.assertIsInstance(vms, list)
        self.assertIsInstance(vms[0], models.VmRecord)
        self.assertEqual(vms[0].vm_id, "vm-1")

    def test_a_model_sent_back_goes_as_its_json(self) -> None:
        hooks = models.LifecycleHooks({"pre_stop": {"command": "sync", "timeout_seconds": 10}})
        self.fake.reply = lambda handler, n: send_json(handler, 200, {"session_id": "s-2"})
        self.client.sessions.create(lifecycle_hooks=hooks)  # type: ignore[arg-type]
        body = json.loads(self.fake.seen[-1].body)
        self.assertEqual(body["lifecycle_hooks"], {"pre_stop": {"command": "sync", "timeout_seconds": 10}})

    def test_the_asyncio_client_answers_the_same_models(self) -> None:
        self.fake.reply = lambda handler, n: send_json(handler, 200, EXECUTED)

        async def main() -> models.ExecuteResponse:
            async with sandboxd.AsyncSandboxd(api_key="k", base_url=self.fake.url) as client:
                return await client.execute("1 + 1", session_id="s-1")

        result = asyncio.run(main())
        self.assertIsInstance(result, models.ExecuteResponse)
        self.assertEqual(result.results[0].text, "2")


if __name__ == "__main__":
    unittest.main()
