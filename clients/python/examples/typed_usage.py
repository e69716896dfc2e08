"""The client README's first example, as a program: typed answers (attribute access, checked by mypy in the
tests), the same answers read by key as before, and a client that closes its connections at the end.

    SANDBOXD_URL=http://127.0.0.1:8080 SANDBOXD_API_KEY=sbx_sk_… python3 examples/typed_usage.py
"""

from sandboxd import Sandboxd
from sandboxd.models import SessionStatus
from sandboxd.types import ExecuteResult

# The key and the server's address come from $SANDBOXD_API_KEY and $SANDBOXD_URL (or api_key=..., base_url=...).
with Sandboxd() as client:  # one pool of keep-alive connections, closed when the block ends
    session = client.sessions.create(vcpu_count=1)
    session.execute("x = 21", timeout=120)  # the first run starts the session's VM
    result: ExecuteResult = session.execute("print(x * 2)")
    print(result.stdout, end="")  # 42
    assert result["stdout"] == result.stdout  # answers still read like dicts
    value = session.execute("x + 1").results[0]  # nested objects are typed too: the last expression's value
    print(value.is_main_result, value.text)  # True 22
    status: SessionStatus = session.status()
    print(status.vm_alive, status.to_dict()["vm_status"])  # True active: to_dict() is the JSON as it came
    session.kill()
