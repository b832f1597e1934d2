"""``import clawnb`` must stay cheap: no HTTP, IPython or widget libraries."""

import subprocess
import sys

HEAVY = ["httpx", "IPython", "ipywidgets", "ipykernel", "pydantic", "openai"]


def test_import_clawnb_is_cheap():
    code = f"import sys, clawnb; print([m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_engine_loops_import_no_jupyter():
    code = (
        "import sys, clawnb.agent, clawnb.executor, clawnb.providers.replay, clawnb.tools; "
        "print([m for m in ('IPython', 'ipywidgets', 'ipykernel') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_lazy_exports_resolve():
    import clawnb

    assert clawnb.MockProvider.__name__ == "MockProvider"
    assert "SimpleAgent" in dir(clawnb)


def test_every_public_name_resolves():
    import clawnb

    for name in clawnb._EXPORTS:
        assert getattr(clawnb, name) is not None, name
