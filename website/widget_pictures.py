"""Static pictures of ipywidgets, made inside the kernel that ran the notebook.

This file is not imported by the site builder: :mod:`website.execute` sends its source
to the kernel before the notebook's first cell (so it runs where the widgets live).
It registers an IPython ``post_run_cell`` hook that, after every cell, renders each
live widget as plain HTML (boxes as flex rows and columns, HTML and images as they
are, controls drawn disabled with their current value) and keeps the newest picture
of each by model id: a widget a later cell updates (the crash lab's ``lab.run``) is
pictured as it ended, one that was closed as it last was. ``_site_widget_pictures_dump``
writes them to a JSON file, ``{model id: html}``.

Why pictures and not live widgets: MyST-NB can embed widget state, but the page then
loads the widget manager's JavaScript from a CDN, which an offline build and a
reader without network cannot do; and the course's widgets call back into a kernel
(the crash lab's Run forks real workers) that a static page does not have.
"""

import base64 as _b64
import html as _html
import json as _json


def _site_widget_picture(widget, depth=0):
    import ipywidgets as w

    if depth > 20:
        return ""
    layout = getattr(widget, "layout", None)
    if layout is not None and (layout.display == "none" or layout.visibility == "hidden"):
        return ""
    esc = _html.escape
    description = esc(str(getattr(widget, "description", "") or ""))
    label = f'<span class="sw-label">{description}</span> ' if description else ""
    if isinstance(widget, w.Box):
        kind = "column" if isinstance(widget, w.VBox) else "row"  # Box, HBox: a row
        inner = "".join(_site_widget_picture(c, depth + 1) for c in widget.children)
        return f'<div class="sw-box sw-{kind}">{inner}</div>'
    if isinstance(widget, w.HTML | w.HTMLMath):
        return f'<div class="sw-html">{label}{widget.value}</div>'
    if isinstance(widget, w.Label):
        return f'<span class="sw-text">{esc(str(widget.value))}</span>'
    if isinstance(widget, w.Image):
        if not widget.value:
            return ""
        fmt = widget.format if widget.format in ("png", "jpeg", "gif", "svg+xml") else "png"
        data = _b64.b64encode(widget.value).decode()
        return (f'<img class="sw-image" alt="{description or "widget picture"}" '
                f'src="data:image/{fmt};base64,{data}">')
    if isinstance(widget, w.Button):
        return f'<button class="sw-button" disabled>{description or "button"}</button>'
    if isinstance(widget, w.Output):
        parts = []
        for output in widget.outputs:
            if output.get("output_type") == "stream":
                parts.append(f'<pre class="sw-pre">{esc(output.get("text", ""))}</pre>')
                continue
            data = output.get("data", {})
            if "text/html" in data:
                parts.append(str(data["text/html"]))
            elif "image/png" in data:
                parts.append(f'<img class="sw-image" alt="output" '
                             f'src="data:image/png;base64,{data["image/png"]}">')
            elif "text/plain" in data:
                parts.append(f'<pre class="sw-pre">{esc(str(data["text/plain"]))}</pre>')
        return f'<div class="sw-output">{"".join(parts)}</div>'
    if isinstance(widget, w.Dropdown | w.Select | w.RadioButtons | w.ToggleButtons):
        chosen = esc(str(widget.label if widget.label is not None else ""))
        return (f'<span class="sw-control">{label}<select disabled>'
                f"<option selected>{chosen}</option></select></span>")
    if isinstance(widget, w.Text | w.Textarea | w.Password):
        return (f'<span class="sw-control">{label}<input type="text" disabled '
                f'value="{esc(str(widget.value))}"></span>')
    if hasattr(widget, "value") and hasattr(widget, "min") and hasattr(widget, "max"):
        value = widget.value
        shown = esc(widget.readout_format.join(["{:", "}"]).format(value)
                    if hasattr(widget, "readout_format") and not isinstance(value, tuple)
                    else str(value))
        # step: without it a browser rounds the value to whole numbers (step 1), and a
        # knob at 0.95 between 0.5 and 1.0 is drawn at the far left
        step = getattr(widget, "step", None)
        return (f'<span class="sw-control">{label}<input type="range" disabled '
                f'min="{esc(str(widget.min))}" max="{esc(str(widget.max))}" '
                f'step="{esc(str(step)) if step else "any"}" '
                f'value="{esc(str(value if not isinstance(value, tuple) else value[0]))}">'
                f' <span class="sw-value">{shown}</span></span>')
    if isinstance(widget, w.Checkbox | w.ToggleButton):
        mark = "checked" if widget.value else ""
        return (f'<span class="sw-control"><input type="checkbox" disabled {mark}> '
                f"{description}</span>")
    if hasattr(widget, "value"):
        return f'<span class="sw-control">{label}{esc(str(widget.value))}</span>'
    return ""


_site_widget_pictures = {}


def _site_widget_snapshot(*_ignored):
    from ipywidgets.widgets.widget import _instances

    for model_id, widget in list(_instances.items()):
        try:
            _site_widget_pictures[model_id] = _site_widget_picture(widget)
        except Exception as error:  # one odd widget must not stop the notebook
            _site_widget_pictures[model_id] = (
                f'<span class="sw-text">(no picture of this widget: '
                f"{_html.escape(type(error).__name__)})</span>")


def _site_widget_pictures_dump(path):
    _site_widget_snapshot()
    with open(path, "w") as file:
        _json.dump(_site_widget_pictures, file)


get_ipython().events.register("post_run_cell", _site_widget_snapshot)  # noqa: F821
