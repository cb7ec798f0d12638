"""The lab's notebooks arrive with the language_info their kernel will write.

JupyterLab marks a notebook modified as soon as its kernel starts if the kernel's
``language_info`` (Python's exact version, its CodeMirror mode, ...) differs from the
notebook's. A release cannot carry every learner's Python version, so a week just opened
looked edited. :class:`KernelLanguageContents` is Jupyter's own contents manager
(``AsyncLargeFileManager``) that, when it hands a Python notebook to the browser, puts in
the ``language_info`` this environment's ipykernel reports (the kernel ``make lab``
starts). Nothing is written to disk: the file changes only when the learner saves, and
then it would have gained the same metadata anyway. ``make lab`` uses it for both roles
(``course/classroom/lab.py``).
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager


@functools.cache
def kernel_language_info() -> dict[str, Any]:
    """What ipykernel (this interpreter's) sends as ``language_info`` in its kernel info."""
    from ipykernel.ipkernel import IPythonKernel

    return copy.deepcopy(IPythonKernel.language_info)


def with_kernel_language(notebook: dict[str, Any]) -> dict[str, Any]:
    """``notebook`` (nbformat JSON) with the kernel's ``language_info`` when it is a Python
    notebook; any other notebook as it is."""
    metadata = notebook.setdefault("metadata", {})
    language = (metadata.get("language_info") or {}).get("name") or (
        metadata.get("kernelspec") or {}).get("language")
    if language == "python":
        metadata["language_info"] = kernel_language_info()
    return notebook


class KernelLanguageContents(AsyncLargeFileManager):
    """Jupyter's contents manager, Python notebooks given the kernel's ``language_info``."""

    async def get(self, path, content=True, type=None, format=None, **kwargs):
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        if model.get("type") == "notebook" and isinstance(model.get("content"), dict):
            with_kernel_language(model["content"])
        return model
