"""Rules answer early where they cannot report: each shortcut is checked on the shapes that sit
right at its edge (the finding must still be there, and only there)."""
from __future__ import annotations

import pytest

from sbatchlint.source import Source
from tests.lintutil import lint_text

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"


def lines(text: str, code: str, select=None):
    """The 1-based lines of ``code``'s findings in ``text``."""
    source = Source(text.encode(), "job.sh")
    return sorted(source.line_of(d.span.start) for d in lint_text(text, select or [code]) if d.code == code)


# -- SBL403: uses are looked for only after the first event that turns tracing on -----------------
XTRACE_SHAPES = [
    # (body after the header, lines of the findings)
    ("set -x\nexport HF_TOKEN=$(cat ~/.hf)\n", [6]),
    ("export HF_TOKEN=$(cat ~/.hf)\nset -x\nsrun python train.py\n", []),
    ("set -x; HF_TOKEN=$(cat ~/.hf)\n", [5]),
    ("set +x\nexport HF_TOKEN=$(cat ~/.hf)\n", []),
    ("set +x\nset -x\nexport WANDB_API_KEY=$(cat k)\n", [7]),
    ("set -x\nset +x\nexport WANDB_API_KEY=$(cat k)\nset -o xtrace\nexport HF_TOKEN=$(cat ~/.hf)\n", [9]),
    ('HF_TOKEN=$(cat ~/.hf)\nset -x\nhuggingface-cli login --token "$HF_TOKEN"\n', [7]),
    ('HF_TOKEN=$(cat ~/.hf)\nhuggingface-cli login --token "$HF_TOKEN"\nset -x\nsrun python train.py\n', []),
    ('HF_TOKEN=$(cat ~/.hf)\nset -x; echo "${HF_TOKEN:0:4}" >/dev/null\n', [6]),
    ('HF_TOKEN=$(cat ~/.hf)\nset -x\nAUTH="Bearer $HF_TOKEN"\n', [7]),  # an expansion outside any argv
    ('HF_TOKEN=$(cat ~/.hf)\nAUTH="Bearer $HF_TOKEN"\nset -x\n', []),
]


@pytest.mark.parametrize("body, expected", XTRACE_SHAPES)
def test_xtrace_uses_are_found_after_the_first_event_that_turns_it_on(body, expected):
    assert lines(HEADER + body, "SBL403") == expected


def test_a_variable_is_secret_by_its_credential_literal_even_where_no_name_looks_secret():
    # (no "token", "key", "secret" or "passw" anywhere in the file: the literal alone makes it secret)
    text = "#!/bin/bash\n#SBATCH --nodes=1\nset -x\nMY_VAR=hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567\n"
    assert lines(text, "SBL403") == [4]
    assert lines(text.replace("set -x\n", "") + "set -x\n", "SBL403") == []


def test_an_expansion_of_a_variable_secret_by_its_literal_alone_is_still_found():
    text = (
        "#!/bin/bash\n#SBATCH --nodes=2\nMY_VAR=hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567\nexport MY_VAR\n"
        'srun bash -c "python x.py --v $MY_VAR"\necho $MY_VAR\n'
    )
    assert lines(text, "SBL402") == [5, 6]
    assert lines("set -x\n".join(text.split("export MY_VAR\n")), "SBL403") == [5]  # once per variable


def test_xtrace_from_the_shebang_covers_the_whole_file():
    text = "#!/bin/bash -x\n#SBATCH --nodes=1\nexport HF_TOKEN=$(cat ~/.hf)\n"
    assert lines(text, "SBL403") == [3]


# -- SBL106: a launch none of whose variants names a size is not read for its configurations -------
def _launch(args: str, before: str = ""):
    from sbatchlint.model.script import Script

    text = HEADER + before + f"srun --kill-on-bad-exit=1 torchrun --nproc_per_node=8 pretrain_gpt.py {args}\n"
    (launch,) = Script(Source(text.encode(), "job.sh")).launches
    return launch


def _spellings(name: str):
    from sbatchlint.model.launch import SHORT_PARALLELISM

    dashed = name.replace("_", "-")
    yield f"--{name} 3"
    yield f"--{name}=3"
    yield f"-{dashed.upper()} 3"
    yield f"---{dashed.title()}=3"
    if name not in SHORT_PARALLELISM:
        yield f"model.{name}=3"
        yield f"+cfg.{dashed.upper()}=3"
        yield f"~a.b.{name}=3"


def test_every_name_of_the_size_table_passes_the_pretest():
    from sbatchlint.model.launch import PARALLELISM_NAMES
    from sbatchlint.rules.launch import _may_name_a_size

    for name in PARALLELISM_NAMES:
        for spelling in _spellings(name):
            launch = _launch(f"--lr 1e-4 {spelling} --seed 1")
            assert launch.parallelism, spelling  # the model reads a size here...
            assert _may_name_a_size(launch.args), spelling  # ...so the pretest must let it through


NEAR_MISSES = [
    "--epochs 3 --output-dir out --steps=10 --app x", "--tpx 2 --xtp 2 tp=2 pp=2 --pp_sizes 2",
    "--tp", "--lr 1 --tp", "cfg.tp=2 cfg.ep_size=4", "--sequence-parallel --use-distributed-optimizer",
    '"--tp 2"', "--tp$X 2", "'--etp=2'", "-- tp 2", "--micro-batch-size=2 --data-path /d",
    "--tp 2 $EXTRA", "model.tensor_model_parallel_size", "--TENSOR_MODEL_PARALLEL_SIZE 4",
    "--context_parallel_size=${CP:-2}", "--pipeline-model-parallel-size $PP",
]


@pytest.mark.parametrize("args", NEAR_MISSES)
def test_the_size_pretest_lets_through_whatever_the_model_reads_a_size_in(args):
    from sbatchlint.rules.launch import _may_name_a_size

    launch = _launch(args, before="PP=4\nTP_ARGS='--tp 2'\n")
    for variant in launch.variants or [launch]:
        if variant.parallelism:
            assert _may_name_a_size(variant.args), args


def test_a_size_that_arrives_through_variables_still_fails_to_divide():
    body = 'P=para\nfor T in 2 3; do\n  srun --kill-on-bad-exit=1 torchrun --nproc_per_node=8 pretrain_gpt.py --tensor-model-${P}llel-size $T\ndone\n'
    assert lines(HEADER + body, "SBL106") == [6]  # at the loop's 3
    body = 'ARGS="--lr 1 --pp 3"\nsrun --kill-on-bad-exit=1 torchrun --nproc_per_node=8 pretrain_gpt.py $ARGS\n'
    assert lines(HEADER + body, "SBL106") == [6]


# -- SBL202: whether an assignment's value holds a blank, without a Python step per character -----
def test_the_blank_test_agrees_with_isspace_on_every_character():
    from sbatchlint.rules.expansion import _has_blank

    characters = [chr(c) for c in range(0x3100)] + ["\U0001f600", "\ufeff", "\u200b", "\u2028", "\u3000"]
    for char in characters:
        for text in (char, "a" + char, char + "b", "a" + char + "b", "ab" + char + char):
            assert _has_blank(text) == any(c.isspace() for c in text), repr(text)
    assert _has_blank("") is False
    assert _has_blank("/results/run_1") is False


# -- SBL006: option values checked once per run, each answer kept for its own option --------------
def test_a_kept_answer_names_its_own_option_and_value():
    def said(header: str):
        return [d.message for d in lint_text("#!/bin/bash\n" + header + "srun hostname\n", ["SBL006"]) if d.code == "SBL006"]

    for _ in range(2):  # the second round reads kept answers
        assert said("#SBATCH --ntasks=0\n") == ['invalid --ntasks "0": must be a whole number >= 1']
        assert said("#SBATCH --cpus-per-task=0\n") == ['invalid --cpus-per-task "0": must be a whole number >= 1']
        assert said("#SBATCH --cpus-per-task=00\n") == ['invalid --cpus-per-task "00": must be a whole number >= 1']
        assert said("#SBATCH --cpus-per-task=4\n") == []
        assert said("#SBATCH --nodes=0\n")[0].startswith('invalid --nodes "0"')


# -- SBL009: a header with no angle bracket (and a file with no placeholder word) is not read line by line
HEADER_PLACEHOLDER_SHAPES = [
    ("#SBATCH --nodes=2\n#SBATCH --account=<YOUR_ACCOUNT>\n", [3]),  # on the last directive's line
    ("#SBATCH --account=<YOUR_ACCOUNT>\n#SBATCH --nodes=2\n", [2]),  # on the first
    ("#SBATCH --nodes=2 --account=<acct>\n", [2]),  # after another directive on the last line
    ("#SBATCH --account=your_account_here\n#SBATCH --nodes=2\n", [2]),  # a word, no bracket anywhere
    ("#SBATCH --account=your_account_here\n", [2]),
    ("#SBATCH --nodes=2\n#SBATCH --partition=gpu\n", []),
    ("#SBATCH --nodes=2\n", []),
]


@pytest.mark.parametrize("header, expected", HEADER_PLACEHOLDER_SHAPES)
@pytest.mark.parametrize("body", ["srun hostname\n", "cat <<EOF > cfg\nx\nEOF\nsrun hostname < cfg\n"])
def test_header_placeholders_are_found_wherever_the_header_holds_one(header, expected, body):
    text = "#!/bin/bash\n" + header + body
    assert [n for n in lines(text, "SBL009") if n <= header.count("\n") + 1] == expected


# -- SBL311: $0 readings found first, the variables that carry them read only when there is one ----
SELF_DIRECTORY_SHAPES = [
    ('DIR=$(dirname "$0")\nsource "$DIR/env.sh"\n', [2]),
    ('DIR=$(dirname "${BASH_SOURCE[0]}")\nHERE=$DIR\nsource "$HERE/env.sh"\n', [2]),
    ('DIR=${0%/*}\npython "$DIR/train.py"\n', [2]),
    ('DIR=${BASH_SOURCE%/*}\npython "$DIR/train.py"\n', [2]),
    ('source "$(dirname "$0")/env.sh"\n', [2]),
    ('echo "$0 ${01} $BASH_SOURCE"\nNAME=$(basename "$0")\n', []),
    ('DIR=$(dirname "${BASH_SOURCE[1]}")\nsource "$DIR/env.sh"\n', []),
    ('DIR=$(dirname "$0")\nif [ -n "$SLURM_JOB_ID" ]; then DIR=$SLURM_SUBMIT_DIR; fi\nsource "$DIR/env.sh"\n', []),
]


@pytest.mark.parametrize("body, expected", SELF_DIRECTORY_SHAPES)
def test_the_script_directory_is_followed_from_every_spelling_of_its_reading(body, expected):
    text = "#!/bin/bash\n#SBATCH --nodes=1\n" + body + "srun hostname\n"
    assert [n - 1 for n in lines(text, "SBL311")] == expected


# -- the rules loop: a rule that raises after a finding gives none of its findings -----------------
def test_a_rule_that_raises_midway_keeps_none_of_its_findings(monkeypatch):
    from sbatchlint import registry
    from sbatchlint.linter import lint
    from tests.lintutil import options

    job = "#SBATCH --nodes=1\nset -e\n#SBATCH --time=10\nsrun hostname\n"
    rule = registry.get("SBL003")
    real = rule.check

    def half(script):
        yield from real(script)
        raise ValueError("bad span 12..11")

    monkeypatch.setattr(rule, "check", half)
    failures = []
    found = lint(Source(job.encode(), "job.sh"), options(), failures=failures)
    assert [f.code for f in failures] == ["SBL003"]
    assert "SBL003" not in {d.code for d in found} and "SBL002" in {d.code for d in found}
    with pytest.raises(ValueError):
        lint(Source(job.encode(), "job.sh"), options())


# -- SBL303: a command whose bytes cannot name a packing step is not evaluated to find one ---------
PACKING_STEP_SHAPES = [
    "python prepare_packed_sequences.py --seq 4096\n",
    'python "prepare_packed.py"\n',
    "python prepare'_'packed.py\n",
    'python /opt/nemo/scripts/Prepare_"Pack"ed.py\n',
    "S=prepare_packed.py\npython $S\n",
    "P=prepare\npython ${P}_packed.py\n",
    "python prepare_\\\npacked.py\n",
    "python prep`echo are`_packed.py\n",
    "srun python prepare_packed.py\n",
    "python prepare_data.py\npython train.py --packed\n",
    "echo prepare; echo packed\n",
    "python préparé_pack.py\n",
    "python prepare_ünpack.py\n",
]


@pytest.mark.parametrize("body", PACKING_STEP_SHAPES)
def test_the_packing_step_is_found_as_when_every_argv_is_read(body):
    from sbatchlint.model.script import Script
    from sbatchlint.model.workload import prepares_packed_data

    def script():
        return Script(Source(("#!/bin/bash\n#SBATCH --nodes=2\n" + body).encode(), "job.sh"))

    full = script()
    for command in full.commands:
        command.argv  # every argv read: the shortcut has nothing to skip
    assert prepares_packed_data(script()) == prepares_packed_data(full)


# -- Rule.report builds the Diagnostic positionally: each field must land where it is named -------
def test_a_report_carries_each_of_its_fields():
    from sbatchlint import registry
    from sbatchlint.diagnostics import Diagnostic, Edit, Fix, Severity
    from sbatchlint.model.script import Script
    from sbatchlint.source import Span

    rule = registry.get("SBL003")
    script = Script(Source(b"#!/bin/bash\nsrun hostname\n", "dir/job.sh"))
    fix = Fix.safe("drop it", Edit.delete(Span(0, 1)))
    made = rule.report(script, Span(1, 2), "the message", fix, label="the label", help="the help",
                       severity=Severity.INFO, notes=["a note"])
    assert made == Diagnostic(code="SBL003", name=rule.name, severity=Severity.INFO, span=Span(1, 2),
                              message="the message", fix=fix, path="dir/job.sh", label="the label",
                              help="the help", notes=("a note",))
    plain = rule.report(script, Span(1, 2), "m")
    assert (plain.severity, plain.fix, plain.label, plain.help, plain.notes) == (rule.severity, None, None, None, ())


# -- SBL006: a plain valid value passes without the rest of the checks -----------------------------
DIRECTIVE_VALUE_SHAPES = [
    ("#SBATCH --time=01:00:00\n", 0),
    ("#SBATCH --time=abc\n", 1),
    ("#SBATCH --nodes=$NODES\n", 1),  # validate accepts an expansion: the rule must still say it
    ("#SBATCH --output=$HOME/out.log\n", 1),
    ("#SBATCH --job-name=${NAME}\n", 0),  # free text: harmless
    ("#SBATCH -N=2\n", 1),
    ("#SBATCH -N 2\n", 0),
    ("#SBATCH --exclusive=yes\n", 1),
    ("#SBATCH --exclusive\n", 0),
    ("#SBATCH --ntasks\n", 1),
    ('#SBATCH --comment="a b\n', 1),
]


@pytest.mark.parametrize("line, count", DIRECTIVE_VALUE_SHAPES)
def test_directive_values_are_judged_whether_or_not_they_take_the_short_way(line, count):
    assert len(lines("#!/bin/bash\n" + line + "srun hostname\n", "SBL006")) == count


# -- options.lookup keeps its answers for sbatch's and srun's own tables ---------------------------
def test_kept_option_lookups_agree_with_the_search():
    from sbatchlint import options

    names = ["", "-", "--", "N", "-N", "x", "--x", "nonesuch", "--nonesuch=1", "con", "cont", "container-im"]
    for table in (options.SBATCH, options.SRUN):
        for key in table:
            names += [key, "--" + key, key + "=1", key[:3], key[:5], key[: len(key) - 1], key.upper()]
    for table in (options.SBATCH, options.SRUN):
        for name in names:
            expected = options._lookup(table, name)
            assert options.lookup(table, name) is expected, name
            assert options.lookup(table, name) is expected, name  # a kept answer
    other = dict(options.SRUN)
    other["nonesuch"] = options.SRUN["nodes"]
    assert options.lookup(other, "nonesuch") is options.SRUN["nodes"]  # another table: searched
    assert options.lookup(options.SRUN, "nonesuch") is None


# -- SBL307: the task's UV_NO_SYNC is read at the first `uv run`, and only there -------------------
UV_HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"
UV_SHAPES = [
    ("", "uv run python train.py", 1),
    ("export UV_NO_SYNC=1\n", "uv run python train.py", 0),
    ("export UV_NO_SYNC=0\n", "uv run python train.py", 1),
    ("export UV_NO_SYNC=\n", "uv run python train.py", 1),
    ("export UV_NO_SYNC=1\n", "uv sync", 1),  # an explicit sync syncs whatever the variable says
    ("export UV_NO_SYNC=1\n", 'bash -c "uv run --no-sync python a.py; uv run python b.py"', 0),
    ("", 'bash -c "uv run --no-sync python a.py; uv run python b.py"', 1),
]


@pytest.mark.parametrize("before, task, count", UV_SHAPES)
def test_a_syncing_uv_run_is_told_by_the_tasks_environment(before, task, count):
    text = UV_HEADER + before + f"srun --kill-on-bad-exit=1 {task}\n"
    assert len(lines(text, "SBL307")) == count


# -- SBL402/SBL403: where no name can be a secret variable's, nothing looks for one ---------------
def test_every_secret_looking_name_holds_the_hint_looked_for():
    import itertools

    from sbatchlint.redaction import is_secret_name
    from sbatchlint.rules.secrets import _holds_secret_name_hint

    words = ["HF", "TOKEN", "KEY", "API", "SECRET", "PASSWORD", "PASSWD", "ACCESS", "PRIVATE", "AUTH",
             "TOKENIZER", "KEYS", "PAD", "PATH", "USE", "SLACK", "BOT", "2", "X", "token", "Key", "ApiKey"]
    names = ["_".join(p) for n in (1, 2, 3) for p in itertools.product(words, repeat=n)]
    names += [n + "_" for n in names[:200]] + ["apikey", "hfToken", "MY-SECRET-THING", "db_passwd2"]
    secret = [n for n in names if is_secret_name(n)]
    assert len(secret) > 100
    for name in secret:
        for text in (f"{name}=x\n", f'echo "${{{name}}}"\n', f"cmd ${name} --x\n"):
            assert _holds_secret_name_hint(text.encode().lower()), (name, text)
    assert not _holds_secret_name_hint(b"--tokenizer-model x --keys-file y --monkeypatch")


# -- step geometry: what it reads of the header alone is read once per script ---------------------
GEOMETRY_HEADERS = [
    "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n",
    "#SBATCH --nodes=2\n#SBATCH --ntasks=16\n#SBATCH --gres=gpu:a100:8\n",
    "#SBATCH --nodes=2\n#SBATCH --gres=none\n#SBATCH --gpus=16\n",
    "#SBATCH --nodes=4\n#SBATCH --ntasks=8\n#SBATCH --gpus-per-task=1\n",
    "#SBATCH --nodes=1\n#SBATCH --gres=craynetwork:1\n",
    "#SBATCH -N 2\n",
]
GEOMETRY_STEPS = (
    "srun hostname\nsrun --ntasks=3 --gpus-per-node=2 python a.py\nsrun --nodes=1 --gres=gpu:1 python b.py\n"
    "srun --ntasks-per-node=2 python c.py\nsrun --gres=none python d.py\n"
)


@pytest.mark.parametrize("header", GEOMETRY_HEADERS)
def test_every_step_geometry_matches_one_read_alone(header):
    from sbatchlint.model.geometry import geometry
    from sbatchlint.model.script import Script

    def script():
        return Script(Source(("#!/bin/bash\n" + header + GEOMETRY_STEPS).encode(), "job.sh"))

    def seen(g):
        return [(q.value, q.origin.where if q.origin else None, q.origin.option if q.origin else None)
                for q in (g.nodes, g.ntasks, g.tasks_per_node, g.gpus_per_node, g.gpus_per_task, g.cpus_per_task)
                ] + [g.gpu_requested, [(o.where, o.option) for o in g.gpu_requests]]

    shared = script()
    together = [seen(geometry(shared, step)) for step in shared.steps]
    alone = []
    for index in range(len(together)):
        fresh = script()  # nothing read of its header yet
        alone.append(seen(geometry(fresh, fresh.steps[index])))
    assert together == alone


def test_a_step_without_gpu_options_takes_every_gpu_request_of_the_header():
    from sbatchlint.model.geometry import geometry
    from sbatchlint.model.script import Script

    text = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n#SBATCH --gpus-per-task=1\n#SBATCH --gres=gpu:8\n"
    script = Script(Source((text + "srun hostname\nsrun python a.py\n").encode(), "job.sh"))
    for step in script.steps:
        g = geometry(script, step)
        assert [(o.where, o.option) for o in g.gpu_requests] == [
            ("header", "gpus-per-node"), ("header", "gres"), ("header", "gpus-per-task")]
        assert (g.gpus_per_node.value, g.gpus_per_task.value) == (8, 1)


# -- SBL201: an entry whose variable no scope answers for is passed over whole ---------------------
def test_early_scope_answers_exactly_for_the_scopes_the_shortcut_keeps():
    from sbatchlint.model import variables
    from sbatchlint.model.script import Script
    from sbatchlint.rules.expansion import _SCOPES, early_scope

    script = Script(Source((HEADER + "srun --gpus-per-task=1 python a.py\nsrun python b.py\n").encode(), "job.sh"))
    names = [v.name for v in variables.TABLE] + ["MODEL_PATH", "HOME", "RANK", "LOCAL_RANK", "CUDA_VISIBLE_DEVICES", "X"]
    for name in names:
        for step in script.steps:
            assert (early_scope(name, script, step) is None) == (variables.scope_of(name) not in _SCOPES), name
