"""What ipywidgets cannot do for a waiting card: draw the eye and take keys.

A :class:`Beacon` is a tiny anywidget (front-end code in the widget itself, no JupyterLab
extension of ours) that sits invisibly in a ``%%claw`` cell. While ``waiting`` is set:

* the tab title starts with ``⏸ approval needed`` (kept there if JupyterLab rewrites it),
* the waiting card (``.clawnb-s-waiting`` or a question box) is scrolled into view and, unless
  the person is typing somewhere, focused;
* on the focused card ``a`` approves, ``d`` denies and ``A`` (shift) always allows — the keys
  click the card's own buttons, so they do exactly what the buttons do. The card carries
  ``data-lm-suppress-shortcuts`` so JupyterLab's command-mode keys (``a`` inserts a cell,
  ``d d`` deletes one) do not fire while it has the focus;
* if the tab is hidden when the card starts waiting and the person has allowed notifications,
  one browser notification says so (a click brings the tab forward; it closes when the card
  is answered or the tab shows). The permission is only ever asked by a small button the
  person clicks, shown while a card waits and the browser has not decided yet.

Everything degrades: without the Web Notifications API there is no button and no
notification; without the ``anywidget`` package :func:`make_beacon` returns ``None``;
a front end without anywidget's extension never renders the beacon (its ``_view_count``
stays 0) and :class:`~clawnb.notebook.widgets.WidgetView` removes it again, so the cell shows
no widget error.
"""

from __future__ import annotations

import functools
from typing import Any

from ..control.imports import load

__all__ = ["BEACON_ESM", "make_beacon"]

BEACON_ESM = r"""
const PREFIX = "\u23f8 approval needed \u00b7 ";
const KEYS = { a: "clawnb-approve", d: "clawnb-deny", A: "clawnb-always" };
const WHAT = {
  approval: "A tool call waits for your approval",
  answer: "A question waits for your answer",
  plan: "A plan waits for your decision",
};

// browsers without the Web Notifications API (or without it here): everything else still works
const notifiable = () => typeof Notification === "function";
// the permission was asked on this page: a prompt the person dismissed is not offered again
let asked = false;

function editing() {
  const a = document.activeElement;
  return !!a && (a.tagName === "INPUT" || a.tagName === "TEXTAREA" || a.isContentEditable);
}

function render({ model, el }) {
  el.style.display = "none";
  let timer = null;
  let observer = null;
  let card = null;
  let note = null; // the browser notification for what waits now, if one was shown

  const setTitle = () => {
    if (!document.title.startsWith(PREFIX)) document.title = PREFIX + document.title;
  };
  const clearTitle = () => {
    if (document.title.startsWith(PREFIX)) document.title = document.title.slice(PREFIX.length);
  };
  const onKey = (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) return;
    const cls = KEYS[event.key];
    if (!cls || !card) return;
    const button = card.querySelector("button." + cls);
    if (!button || button.disabled) return;
    event.preventDefault();
    event.stopPropagation();
    button.click();
  };
  const notify = () => {
    // only when the tab cannot be seen, and only with a permission the person gave
    if (!document.hidden || !notifiable() || Notification.permission !== "granted") return;
    const page = document.title.startsWith(PREFIX)
      ? document.title.slice(PREFIX.length)
      : document.title;
    const body = (WHAT[model.get("waiting")] || WHAT.approval) + " \u00b7 " + page;
    try {
      // one per notebook: a second view of the same notebook replaces it, not adds one
      note = new Notification(PREFIX.slice(0, -3), { body, tag: "clawnb " + page });
    } catch (error) {
      note = null; // some browsers allow notifications only from a service worker
      return;
    }
    note.onclick = () => {
      window.focus();
      close();
    };
  };
  const close = () => {
    if (note) note.close();
    note = null;
  };
  const onVisibility = () => {
    if (!document.hidden) close(); // back on the tab: the card itself shows what waits
  };
  const offer = () => {
    // asking needs a click of the person's own: a small button while a card waits, until
    // it is clicked once (the browser remembers a decision), never a prompt of ours
    if (asked || !notifiable() || Notification.permission !== "default") return;
    const button = document.createElement("button");
    button.className = "jupyter-button clawnb-notify";
    button.textContent = "\ud83d\udd14 Notify me when a card waits in a hidden tab";
    button.title = "a browser notification when clawnb waits for you and this tab is hidden";
    button.addEventListener("click", () => {
      asked = true;
      withdraw();
      Promise.resolve(Notification.requestPermission()).catch(() => null);
    });
    el.replaceChildren(button);
    el.style.display = "";
  };
  const withdraw = () => {
    el.replaceChildren();
    el.style.display = "none";
  };
  const release = () => {
    close();
    withdraw();
    document.removeEventListener("visibilitychange", onVisibility);
    if (timer !== null) clearInterval(timer);
    timer = null;
    if (observer) observer.disconnect();
    observer = null;
    if (card) {
      card.removeEventListener("keydown", onKey, true);
      card.removeAttribute("data-lm-suppress-shortcuts");
    }
    card = null;
    clearTitle();
  };
  const attend = () => {
    release();
    setTitle();
    notify();
    document.addEventListener("visibilitychange", onVisibility);
    offer();
    const titleNode = document.querySelector("title");
    if (titleNode) {
      // JupyterLab rewrites the title when the current document changes: put it back
      observer = new MutationObserver(setTitle);
      observer.observe(titleNode, { childList: true, characterData: true, subtree: true });
    }
    let tries = 0;
    timer = setInterval(() => {
      // the card's "waiting" class arrives in its own widget message: look until it is there
      const cell = el.closest(".clawnb-cell");
      const found = cell && cell.querySelector(".clawnb-s-waiting, .clawnb-question");
      if (found || ++tries > 100) {
        clearInterval(timer);
        timer = null;
      }
      if (!found) return;
      card = found.closest(".clawnb-card") || found;
      card.setAttribute("tabindex", "0");
      card.setAttribute("data-lm-suppress-shortcuts", "true");
      card.addEventListener("keydown", onKey, true);
      card.scrollIntoView({ block: "nearest" });
      if (!editing()) card.focus({ preventScroll: true });
    }, 20);
  };
  const update = () => (model.get("waiting") ? attend() : release());
  model.on("change:waiting", update);
  update();
  return () => {
    model.off("change:waiting", update);
    release();
  };
}

export default { render };
"""


def make_beacon() -> Any:
    """A new :class:`Beacon`, or ``None`` when anywidget is not installed."""
    cls = _beacon_class()
    return cls() if cls is not None else None


@functools.cache
def _beacon_class() -> Any:
    try:
        load("anywidget")  # the installed ones, never modules of the notebook's folder
        load("traitlets")
        import anywidget
        import traitlets
    except ImportError:
        return None

    class Beacon(anywidget.AnyWidget):
        """Draws attention to the cell's waiting card (see the module docstring)."""

        _esm = BEACON_ESM
        # what waits ("approval", "answer", "plan"); "" when nothing does
        waiting = traitlets.Unicode("").tag(sync=True)

    return Beacon
