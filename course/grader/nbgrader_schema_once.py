"""nbgrader's ``CheckCellMetadata``, with its JSON schema checked once per process.

What it works around and why: see below; the hooks it relies on are nbgrader's, not
public API, so each is named here and checked by tests/test_upstream_grader.py:

- :class:`MetadataValidator` puts :class:`_CheckedOnce` between nbgrader's
  ``MetadataValidatorV3`` and ``BaseMetadataValidator`` in the method order: it relies on
  ``MetadataValidatorV3.validate_cell(cell)`` calling ``super().validate_cell(cell)`` for
  the schema check and on ``BaseMetadataValidator``'s ``schema`` and ``schema_version``;
- :func:`swap_in` assigns a converter's ``preprocessors`` (a list of preprocessor classes,
  nbgrader's ``CheckCellMetadata`` among them; not a setting): ``generate_assignment``
  cannot be given another preprocessor through ``nbgrader_config.py``;
- :class:`CheckCellMetadata` overrides ``preprocess`` (a Preprocessor's public API) and is
  named in ``nbgrader_config.py`` for autograde.

Written against: nbgrader 0.9.6, jsonschema 4.26.0.
Upstream: no upstream issue; the hook is private.

nbgrader validates every cell's ``nbgrader`` metadata before and after autograding
each notebook. It does so with ``jsonschema.validate(metadata, schema)``, which first
checks nbgrader's own schema file against the JSON Schema meta-schema and builds a
new validator, for every cell: nine tenths of the check's time, about 30 ms per
notebook of week 5, twice per student. :class:`CheckCellMetadata` (named in
``nbgrader_config.py`` in place of nbgrader's) runs the same checks in the same order,
with one validator per schema built (after the same meta-schema check) the first time
it is needed. A cell that fails gets the same error: the same schema version checks,
``jsonschema``'s ``best_match`` of the same errors, nbgrader's own log lines and
``ValidationError``.

tests/test_grading_speedups.py checks the results are nbgrader's (the same failures, the
same messages) and that ``generate_assignment`` gets the course's check.
"""

from __future__ import annotations

import functools
import json
import traceback

import jsonschema
from nbgrader.nbgraderformat import ValidationError
from nbgrader.nbgraderformat.common import (
    BaseMetadataValidator,
    SchemaTooNewError,
    SchemaTooOldError,
)
from nbgrader.nbgraderformat.v3 import MetadataValidatorV3
from nbgrader.preprocessors import CheckCellMetadata as NbgraderCheckCellMetadata


@functools.cache
def _validator(schema_text: str):
    """What ``jsonschema.validate`` builds for ``schema`` (after checking it), once."""
    schema = json.loads(schema_text)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


class _CheckedOnce(BaseMetadataValidator):
    def validate_cell(self, cell) -> None:
        """``BaseMetadataValidator.validate_cell`` with a validator built once."""
        if "nbgrader" not in cell.metadata:
            return
        schema = cell.metadata["nbgrader"].get("schema_version", 0)
        if schema < self.schema_version:
            raise SchemaTooOldError(
                f"Outdated schema version: {schema} (expected {self.schema_version})",
                schema, self.schema_version)
        if schema > self.schema_version:
            raise SchemaTooNewError(
                f"Schema version is too new: {schema} (expected {self.schema_version})",
                schema, self.schema_version)
        validator = _validator(json.dumps(self.schema))
        error = jsonschema.exceptions.best_match(validator.iter_errors(cell.metadata["nbgrader"]))
        if error is not None:
            raise error


class MetadataValidator(MetadataValidatorV3, _CheckedOnce):
    """nbgrader's current metadata validator (v3); its ``super().validate_cell`` call
    lands in :class:`_CheckedOnce` instead of ``BaseMetadataValidator``."""


class CheckCellMetadata(NbgraderCheckCellMetadata):
    """nbgrader's CheckCellMetadata (module docstring)."""

    def preprocess(self, nb, resources):
        try:
            MetadataValidator().validate_nb(nb)
        except ValidationError:
            self.log.error(traceback.format_exc())
            msg = "Notebook failed to validate; the nbgrader metadata may be corrupted."
            self.log.error(msg)
            raise ValidationError(msg)  # noqa: B904 - as nbgrader raises it
        return nb, resources


def swap_in(app) -> None:
    """Swap nbgrader's CheckCellMetadata for the course's in ``app.preprocessors`` (a
    converter such as ``GenerateAssignment``)."""
    if NbgraderCheckCellMetadata in app.preprocessors:
        app.preprocessors = [CheckCellMetadata if p is NbgraderCheckCellMetadata else p
                             for p in app.preprocessors]
