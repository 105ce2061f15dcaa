"""Run a composite action (``action.yml``) the way a GitHub runner does, on this machine, for tests.

No GitHub runner is reachable from the test machine, so this plays its part for the action's own
steps, following what the runner documents and does:

- the step's inputs are the workflow's ``with:`` values over the inputs' defaults, all strings; an
  input the action does not declare is an error here (GitHub warns about it);
- ``${{ inputs.NAME }}``, ``${{ github.action_path }}`` and ``${{ github.workspace }}`` are replaced
  in ``env:``, ``with:`` and ``if:`` before a step runs; composite steps get NO ``INPUT_*``
  variables (only JavaScript and Docker actions do), so none is set here;
- a step runs only while every earlier step succeeded, and only if its ``if:`` holds;
- ``run:`` steps with ``shell: bash`` run as ``bash --noprofile --norc -eo pipefail FILE`` with the
  script in a file under ``RUNNER_TEMP``, in ``GITHUB_WORKSPACE``, with ``GITHUB_OUTPUT``,
  ``GITHUB_ENV``, ``GITHUB_PATH`` and ``GITHUB_STEP_SUMMARY`` files; lines a step appends to
  ``GITHUB_PATH`` go before ``PATH`` for the later steps;
- ``uses:`` steps (other actions, which live on GitHub) run through stand-ins the test gives, which
  check what the action passes them. An action with no stand-in is an error.

What a stand-in cannot show is how the real action behaves: that remains for a real runner.
"""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

import yaml

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
COMPARISON = re.compile(r"^(\S+)\s*(==|!=)\s*(\S+)$")


@dataclass
class Step:
    name: str
    ran: bool
    returncode: int = 0
    stdout: str = ""
    stderr: str = ""
    inputs: Dict[str, str] = field(default_factory=dict)  # a ``uses:`` step's ``with:``, evaluated


@dataclass
class Outcome:
    steps: List[Step]
    outputs: Dict[str, str]  # what the steps wrote to GITHUB_OUTPUT

    @property
    def succeeded(self) -> bool:
        return all(step.returncode == 0 for step in self.steps if step.ran)

    def step(self, name: str) -> Step:
        return next(step for step in self.steps if step.name == name)


StandIn = Callable[[Dict[str, str], Dict[str, str]], int]  # (with, environment) -> exit code


def _value(operand: str, context: Dict[str, Dict[str, str]]) -> str:
    if operand.startswith("'") and operand.endswith("'"):
        return operand[1:-1].replace("''", "'")
    scope, _, name = operand.partition(".")
    if scope not in context or not name:
        raise ValueError(f"expression not understood by the local runner: {operand}")
    return context[scope].get(name, "")


def evaluate(expression: str, context: Dict[str, Dict[str, str]]) -> str:
    """A value expression (``inputs.x``, ``github.x`` or a quoted string)."""
    return _value(expression.strip(), context)


def condition(expression: str, context: Dict[str, Dict[str, str]]) -> bool:
    """An ``if:`` of the forms the action uses: ``A == B`` or ``A != B`` (strings compared as
    GitHub compares them, case-insensitively)."""
    text = expression.strip()
    inner = EXPRESSION.fullmatch(text)
    if inner:
        text = inner.group(1)
    match = COMPARISON.match(text)
    if not match:
        raise ValueError(f"if: not understood by the local runner: {expression}")
    left, op, right = match.groups()
    same = _value(left, context).lower() == _value(right, context).lower()
    return same if op == "==" else not same


def substitute(text: str, context: Dict[str, Dict[str, str]]) -> str:
    return EXPRESSION.sub(lambda m: evaluate(m.group(1), context), str(text))


def run_action(action_path: str, workspace: str, inputs: Dict[str, str], stand_ins: Dict[str, StandIn],
               environment: Optional[Dict[str, str]] = None) -> Outcome:
    with open(os.path.join(action_path, "action.yml"), encoding="utf-8") as handle:
        action = yaml.safe_load(handle)
    assert action["runs"]["using"] == "composite"
    declared = action.get("inputs") or {}
    unknown = set(inputs) - set(declared)
    if unknown:
        raise ValueError(f"inputs the action does not declare: {sorted(unknown)}")
    values = {name: str(spec.get("default", "")) for name, spec in declared.items()}
    values.update({name: str(value) for name, value in inputs.items()})
    for name, spec in declared.items():
        if spec.get("required") and not values.get(name):
            raise ValueError(f"required input missing: {name}")
    runner_temp = os.path.join(workspace, "..", "_runner_temp")
    os.makedirs(runner_temp, exist_ok=True)
    files = {key: os.path.join(runner_temp, key.lower()) for key in
             ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY")}
    for path in files.values():
        open(path, "w").close()
    base = dict(environment if environment is not None else os.environ)
    for key in list(base):
        if key.startswith("INPUT_") or key == "PYTHONPATH":
            del base[key]
    base.update(files, GITHUB_WORKSPACE=workspace, GITHUB_ACTION_PATH=action_path, RUNNER_TEMP=runner_temp,
                GITHUB_ACTIONS="true", CI="true")
    context = {"inputs": values, "github": {"action_path": action_path, "workspace": workspace}}
    steps: List[Step] = []
    failed = False
    for index, spec in enumerate(action["runs"]["steps"]):
        name = spec.get("name") or spec.get("uses") or f"step {index + 1}"
        if failed or ("if" in spec and not condition(str(spec["if"]), context)):
            steps.append(Step(name, ran=False))
            continue
        env = dict(base)
        with open(files["GITHUB_PATH"], encoding="utf-8") as handle:
            added = [line.strip() for line in handle if line.strip()]
        if added:
            env["PATH"] = os.pathsep.join(list(reversed(added)) + [env.get("PATH", "")])
        env.update({key: substitute(value, context) for key, value in (spec.get("env") or {}).items()})
        if "run" in spec:
            if spec.get("shell") != "bash":
                raise ValueError(f"{name}: the local runner runs bash steps only")
            script = os.path.join(runner_temp, f"step{index}.sh")
            with open(script, "w", encoding="utf-8") as handle:
                handle.write(substitute(spec["run"], context))  # as the runner does (the action puts none there)
            done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script], cwd=workspace,
                                  env=env, capture_output=True, text=True, timeout=600)
            steps.append(Step(name, True, done.returncode, done.stdout, done.stderr))
        else:
            uses = spec["uses"]
            stand_in = next((fn for prefix, fn in stand_ins.items() if uses.split("@")[0] == prefix), None)
            if stand_in is None:
                raise ValueError(f"{name}: no stand-in for {uses}")
            given = {key: substitute(value, context) for key, value in (spec.get("with") or {}).items()}
            steps.append(Step(name, True, stand_in(given, env), inputs=given))
        failed = steps[-1].returncode != 0
    outputs = {}
    with open(files["GITHUB_OUTPUT"], encoding="utf-8") as handle:
        for line in handle:
            key, sep, value = line.rstrip("\n").partition("=")
            if sep:
                outputs[key] = value
    return Outcome(steps, outputs)
