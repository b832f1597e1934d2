"""A waiting card cannot be missed and is quick to answer, in a real JupyterLab + Chromium:
it is scrolled into view and focused, the tab title says "⏸ approval needed" while it waits,
and the ``a`` key approves it (without JupyterLab's own ``a``, "insert cell above", firing)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.e2e

TITLE_PREFIX = "\u23f8 approval needed"


def test_a_waiting_card_comes_into_view_names_the_tab_and_takes_the_a_key(lab) -> None:
    workdir = lab.server.root / "attention"
    workdir.mkdir()
    call = {"id": "w1", "name": "write", "arguments": {"path": "keyed.txt", "content": "hi\n"}}
    turns = [{"text": "Writing it.", "tool_calls": [call]}, {"text": "Written by key."}]
    (workdir / "script.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    cells = [
        "%load_ext clawnb\nprint('\\n'.join(f'line {i}' for i in range(60)))",
        "%%claw --model scripted:script.jsonl\nWrite keyed.txt.",
        "print('after')",
    ]
    lab.open(lab.server.write_notebook("attention.ipynb", cells, directory=workdir))
    lab.page.set_viewport_size({"width": 1000, "height": 520})
    lab.run_all()  # the first cell's 60 lines put the claw cell below the fold
    lab.wait_output(1, r"waiting for approval")
    card = lab.cell(1).locator(".clawnb-cell .clawnb-card.clawnb-s-waiting")
    lab.page.wait_for_function(
        "(p) => document.title.startsWith(p)", arg=TITLE_PREFIX, timeout=10_000
    )
    lab.page.wait_for_function(
        """() => { const c = document.querySelector('.clawnb-cell .clawnb-card.clawnb-s-waiting');
                   if (!c) return false;
                   const r = c.getBoundingClientRect();
                   return r.top >= 0 && r.bottom <= window.innerHeight
                       && document.activeElement === c; }""",
        timeout=10_000,
    )
    cells_before = lab.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").count()
    lab.shot("waiting-focused")
    assert card.get_attribute("data-lm-suppress-shortcuts") == "true"

    lab.page.keyboard.press("a")
    lab.wait_output(1, r"Written by key\.")
    lab.wait_output(2, r"after")
    assert (workdir / "keyed.txt").read_text() == "hi\n"
    assert "(approved)" in lab.output_text(1)
    # JupyterLab's command-mode "a" (insert a cell above) did not fire as well
    assert lab.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").count() == (
        cells_before
    )
    lab.page.wait_for_function(
        "(p) => !document.title.startsWith(p)", arg=TITLE_PREFIX, timeout=10_000
    )
    lab.shot("approved-by-key")


def test_a_notebook_saved_mid_run_reopens_readable(lab) -> None:
    """Saved while a card waits (as autosave does), then reopened with no kernel behind the
    widgets: the snapshot is shown, never "Error displaying widget: model not found"."""
    workdir = lab.server.root / "midrun"
    workdir.mkdir()
    call = {"id": "w1", "name": "write", "arguments": {"path": "later.txt", "content": "x\n"}}
    turns = [{"text": "Checking the stock first.", "tool_calls": [call]}, {"text": "Done."}]
    (workdir / "script.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    cells = ["%load_ext clawnb", "%%claw --model scripted:script.jsonl\nWrite later.txt."]
    notebook = lab.server.write_notebook("midrun.ipynb", cells, directory=workdir)
    lab.open(notebook)
    lab.run_all()
    lab.wait_output(1, r"waiting for approval")
    # the snapshot is refreshed every 2 s while the cell runs; it stays hidden meanwhile
    lab.page.wait_for_function(
        """() => [...document.querySelectorAll('.clawnb-snapshot')].some((e) =>
               e.closest('.jp-OutputArea-output').textContent.includes('waiting for approval'))""",
        timeout=10_000,
    )
    assert not lab.page.locator(".clawnb-snapshot").first.is_visible()
    lab.page.evaluate(
        "() => { window.jupyterapp.commands.execute('docmanager:save'); return true; }"
    )
    lab.page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=10_000
    )
    saved = notebook.read_text()
    assert "application/vnd.jupyter.widget-view+json" in saved and "clawnb-snapshot" in saved

    # a fresh page, the kernel shut down: the widgets' models are gone for good
    for session in lab.server.api("/api/sessions"):
        lab.server.api(f"/api/sessions/{session['id']}", method="DELETE")
    page = lab.page.context.new_page()
    rel = notebook.relative_to(lab.server.root).as_posix()
    page.goto(lab.server.url(f"/lab/workspaces/reopen/tree/{rel}?reset"))
    page.locator(".jp-Cell .clawnb-snapshot").first.wait_for(state="attached")
    output = page.locator(".jp-Cell").nth(1).locator(".jp-Cell-outputArea")
    # the widget manager gives up on the dead model: its error is in the DOM, but hidden
    page.wait_for_function(
        """() => [...document.querySelectorAll('.jp-OutputArea-output')].some((e) =>
               e.textContent.includes('model not found'))""",
        timeout=20_000,
    )
    text = output.inner_text()
    assert "Checking the stock first." in text and "waiting for approval" in text
    assert "saved while the cell was running" in text
    assert "model not found" not in text and "Error displaying widget" not in text
    page.screenshot(path=str(lab.artifacts / f"{lab.prefix}-reopened.png"), full_page=True)


# Watches the Web Notifications API from inside the page (the real one is still called) and
# lets the test hide and show the tab: `document.hidden` is what the beacon reads.
WATCH_NOTIFICATIONS = """(permission) => {
    window.__notes = [];
    window.__focused = 0;
    window.__asked = 0;
    const Real = window.Notification;
    window.Notification = class extends Real {
        constructor(title, options) {
            super(title, options);
            this.closedByPage = false;
            window.__notes.push(this);
        }
        close() { this.closedByPage = true; super.close(); }
    };
    if (permission !== null) {  // a person who has not decided yet (headless answers "denied")
        window.__permission = permission;
        Object.defineProperty(window.Notification, 'permission',
                              {configurable: true, get: () => window.__permission});
        window.Notification.requestPermission = () => {  // the person closes the prompt
            window.__asked += 1;
            return Promise.resolve('default');
        };
    }
    const focus = window.focus.bind(window);
    window.focus = () => { window.__focused += 1; focus(); };
    window.__hidden = false;
    Object.defineProperty(document, 'hidden', {configurable: true, get: () => window.__hidden});
    window.__setHidden = (hidden) => {
        window.__hidden = hidden;
        document.dispatchEvent(new Event('visibilitychange'));
        return true;
    };
    return true;
}"""


def _three_writes(workdir) -> None:
    turns = [
        {
            "text": f"Writing {name}.",
            "tool_calls": [
                {
                    "id": name,
                    "name": "write",
                    "arguments": {"path": f"{name}.txt", "content": "x\n"},
                }
            ],
        }
        for name in ("one", "two", "three")
    ]
    turns.append({"text": "All three written."})
    (workdir / "script.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))


def _waiting_on(lab, name: str) -> None:
    """Wait until the card writing ``name``.txt waits, has the focus (keys answer it) and
    the tab title says so."""
    lab.page.wait_for_function(
        """([name, prefix]) => [...document.querySelectorAll('.clawnb-card.clawnb-s-waiting')]
               .some((c) => c.textContent.includes(name + '.txt')
                            && document.activeElement === c)
               && document.title.startsWith(prefix)""",
        arg=[name, TITLE_PREFIX],
        timeout=20_000,
    )


def test_a_card_waiting_in_a_hidden_tab_notifies_once_and_the_click_focuses_the_tab(
    lab,
) -> None:
    workdir = lab.server.root / "notify"
    workdir.mkdir()
    _three_writes(workdir)
    cells = ["%load_ext clawnb", "%%claw --model scripted:script.jsonl\nWrite three files."]
    lab.page.context.grant_permissions(["notifications"])
    lab.open(lab.server.write_notebook("notify.ipynb", cells, directory=workdir))
    assert lab.page.evaluate(WATCH_NOTIFICATIONS, None) is True
    lab.page.evaluate("() => window.__setHidden(true)")
    lab.run_all()

    # hidden tab, permission granted: one notification for the waiting card
    _waiting_on(lab, "one")
    lab.page.wait_for_function("() => window.__notes.length >= 1", timeout=10_000)
    note = lab.page.evaluate(
        "() => ({title: __notes[0].title, body: __notes[0].body, count: __notes.length})"
    )
    assert note["count"] == 1
    assert note["title"] == TITLE_PREFIX
    assert note["body"].startswith("A tool call waits for your approval")
    assert "notify.ipynb" in note["body"]
    # clicking it brings the tab forward and closes it
    lab.page.evaluate("() => __notes[0].dispatchEvent(new Event('click'))")
    assert lab.page.evaluate("() => [__focused, __notes[0].closedByPage]") == [1, True]
    assert lab.page.locator(".clawnb-notify").count() == 0  # granted: nothing to offer

    # the next card, still hidden: its own notification, closed when the tab is shown
    lab.page.keyboard.press("a")
    _waiting_on(lab, "two")
    lab.page.wait_for_function("() => window.__notes.length >= 2", timeout=10_000)
    lab.page.evaluate("() => window.__setHidden(false)")
    assert lab.page.evaluate("() => [__notes.length, __notes[1].closedByPage]") == [2, True]

    # a card that waits while the tab is in view: no notification
    lab.page.keyboard.press("a")
    _waiting_on(lab, "three")
    assert lab.page.evaluate("() => __notes.length") == 2
    lab.page.keyboard.press("a")
    lab.wait_output(1, r"All three written\.")
    assert sorted(p.name for p in workdir.glob("*.txt")) == ["one.txt", "three.txt", "two.txt"]


def test_notifications_are_offered_on_a_click_of_the_persons_own_never_asked_unprompted(
    lab,
) -> None:
    workdir = lab.server.root / "offer"
    workdir.mkdir()
    _three_writes(workdir)
    cells = ["%load_ext clawnb", "%%claw --model scripted:script.jsonl\nWrite three files."]
    lab.open(lab.server.write_notebook("offer.ipynb", cells, directory=workdir))
    assert lab.page.evaluate(WATCH_NOTIFICATIONS, "default") is True
    lab.page.set_viewport_size({"width": 560, "height": 900})
    lab.run_all()

    _waiting_on(lab, "one")
    offer = lab.cell(1).locator("button.clawnb-notify")
    offer.wait_for(state="visible")
    assert lab.page.evaluate("() => __asked") == 0  # shown, not asked
    # at 560 px the offer wraps instead of being cut short
    assert offer.evaluate("(b) => b.scrollWidth <= b.clientWidth")
    lab.shot("notification-offer")
    for dark in (False, True):  # readable in both themes (axe-core's colour-contrast rule)
        lab.set_theme(dark)
        result = lab.contrast(".clawnb-cell .clawnb-notify")
        assert result["violations"] == [] and result["passes"] >= 1, result
    lab.set_theme(False)
    offer.click()
    assert lab.page.evaluate("() => __asked") == 1
    assert lab.page.locator("button.clawnb-notify").count() == 0

    # asked once (here the person closed the browser's prompt): the next card offers nothing
    lab.cell(1).locator(".clawnb-s-waiting button.clawnb-approve").click()
    _waiting_on(lab, "two")
    assert lab.page.locator("button.clawnb-notify").count() == 0
    assert lab.page.evaluate("() => __asked") == 1
    lab.page.keyboard.press("a")
    _waiting_on(lab, "three")
    lab.page.keyboard.press("a")
    lab.wait_output(1, r"All three written\.")
