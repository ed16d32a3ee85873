from core.workflow.model import STEP_TYPES, StepDef, VariableDef, WorkflowDef
from core.workflow.validation import parse_definition
from core.workflow.variables import validate_variables

__all__ = ["STEP_TYPES", "StepDef", "VariableDef", "WorkflowDef", "parse_definition", "validate_variables"]
