"""A step-through widget for the course's "see it run" views: Prev / Next buttons and a slider
over a list of pre-rendered frames (HTML), one frame per step of a run.

The frames are computed up front by :mod:`clawnb.course.see` (engine side, no widgets); this
module only moves between them, so what a step shows never depends on the widget and the
static table a saved notebook keeps is the same content, all steps at once.
"""

from __future__ import annotations

from ..control.imports import load

load("ipywidgets")  # the installed one, never a module of the notebook's folder
import ipywidgets as widgets  # noqa: E402

__all__ = ["Stepper"]

_EMPTY = (
    '<div style="color:var(--jp-content-font-color2);font-family:var(--jp-ui-font-family)">'
    "no steps yet</div>"
)


class Stepper(widgets.VBox):
    """``Stepper(frames)``: shows ``frames[step - 1]``; ◀ / ▶ and the slider change ``step``."""

    def __init__(self, frames: list[str], *, label: str = "step") -> None:
        count = max(len(frames), 1)
        previous = widgets.Button(description="◀ Prev", tooltip="previous step")
        following = widgets.Button(description="Next ▶", tooltip="next step")
        for button in (previous, following):
            button.layout.width = "auto"
        slider = widgets.IntSlider(value=1, min=1, max=count, description=label)
        position = widgets.Label()
        view = widgets.HTML()
        super().__init__([widgets.HBox([previous, slider, following, position]), view])
        self.frames = list(frames)
        self.prev, self.next, self.slider, self.position, self.view = (
            previous,
            following,
            slider,
            position,
            view,
        )
        # handlers before the widget is displayed, so an early click is not lost (§4.5)
        previous.on_click(lambda _button: self.show(self.step - 1))
        following.on_click(lambda _button: self.show(self.step + 1))
        slider.observe(lambda _change: self._render(), names="value")
        self._render()

    @property
    def step(self) -> int:
        """The step on show, counted from 1."""
        return int(self.slider.value)

    def show(self, step: int) -> None:
        """Go to ``step`` (clamped to the first and last)."""
        self.slider.value = max(1, min(step, len(self.frames) or 1))

    def _render(self) -> None:
        total = len(self.frames)
        self.view.value = self.frames[self.step - 1] if total else _EMPTY
        self.position.value = f"{self.step} of {total}" if total else "0 of 0"
        self.prev.disabled = self.step <= 1
        self.next.disabled = self.step >= total
