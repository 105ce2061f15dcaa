"""Shortcuts of the shared analyses (launches, containers, early expansions) against the full
computation they stand for, on shapes written for the purpose."""
from __future__ import annotations

import pytest

from lintutil import lint_text
from sbatchlint.model import containers as container_model
from sbatchlint.model.script import Script
from sbatchlint.source import Source

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n"
IMAGE = "--container-image=nvcr.io/nvidia/pytorch:25.01-py3"


def script_of(body: str, settings=None) -> Script:
    return Script(Source((HEADER + body).encode(), "job.sh"), settings)


# -- containers: the host paths are found when first asked -----------------------------------------
HOST_SHAPES = [
    "mkdir -p /lustre/fsw/alice/runs\nsrun python t.py\n",
    "RUN=/lustre/fsw/alice/runs/exp1\nmkdir -p $RUN\ncd $RUN\n"
    f"srun {IMAGE} --container-mounts=/lustre/fsw/alice/runs:/lustre/fsw/alice/runs python t.py --save $RUN\n",
    "#SBATCH --output=/lustre/logs/%j.out\nexport HF_HOME=/scratch/hf\necho hi > /gpfs/a/log.txt\n"
    f"srun {IMAGE} --container-mounts=/lustre/logs:/job --container-workdir=/job python t.py --out /job/x\n",
    "rm -rf ~/tmp/x\ncp a /home/alice/b\nsrun bash -c 'mkdir -p /lustre/x'\n",
]


def _uses(uses):
    return [(u.kind, u.path, u.span, u.step, u.variable) for u in uses]


@pytest.mark.parametrize("body", HOST_SHAPES)
def test_host_paths_found_late_are_those_found_at_once(body):
    """The analysis finds the host paths when a question first needs them: after every rule has
    run, they are what ``_host_paths`` finds on a fresh model before anything else is asked."""
    fresh = script_of(body)
    fresh.steps  # (the model's own parts, as the analysis finds them built)
    at_once = container_model._host_paths(fresh)
    late = script_of(body)
    lint_text(HEADER + body)  # (the rules on another model: nothing shared)
    analysis = late.containers
    for step in late.steps:
        for use in analysis.paths_for(step):
            analysis.is_shared(use.path)
    assert _uses(analysis.host_paths) == _uses(at_once)


def test_host_paths_are_not_found_unless_asked():
    """A job without a container asks nothing of its host paths: the batch shell's file commands
    are not evaluated for them."""
    script = script_of("mkdir -p /lustre/fsw/alice/$RUN_NAME\nsrun python t.py\n")
    script.containers
    mkdir = next(c for c in script.commands if c.program == "mkdir")
    assert "argv" not in mkdir.__dict__
    assert [u.kind for u in script.containers.host_paths] == ["mkdir"]


def test_a_host_path_asked_late_still_reports_the_directory_seen_under_another_name():
    """SBL302 (the batch shell uses a directory the container sees under another name) reads
    the host paths after the analysis is built: the ``mkdir`` is what makes it fire."""
    step = f"srun {IMAGE} --container-mounts=/lustre/fsw/alice/runs:/runs python t.py --save /runs/exp1/ckpt\n"
    found = [d for d in lint_text(HEADER + "mkdir -p /lustre/fsw/alice/runs/exp1/ckpt\n" + step) if d.code == "SBL302"]
    assert [d.message for d in found] == ["`/lustre/fsw/alice/runs` is mounted at another path, `/runs`"]
    assert not [d for d in lint_text(HEADER + step) if d.code == "SBL302"]


# -- launches: torchrun option names are resolved once per name ------------------------------------
def test_a_torchrun_option_name_kept_per_name_is_what_the_table_gives():
    """``_elastic_name`` keeps its answer per name: asked again, it gives what a scan of the
    option table gives (full names, either spelling, unique and ambiguous prefixes, other names)."""
    from sbatchlint.model import launch

    names = list(launch.TORCHRUN_OPTIONS) + [n.replace("_", "-") for n in launch.TORCHRUN_OPTIONS]
    names += [n[:k] for n in launch.TORCHRUN_OPTIONS for k in range(1, len(n))]
    names += ["num-layers", "NPROC-PER-NODE", "tensor-model-parallel-size", ""]
    for _ in range(2):
        for name in names:
            normal = launch.normalise(name)
            matches = [n for n in launch.TORCHRUN_OPTIONS if n.startswith(normal)]
            table = normal if normal in launch.TORCHRUN_OPTIONS else matches[0] if len(matches) == 1 else None
            assert launch._elastic_name(name) == table, name


# -- swaps: where the step's string's pieces stand is worked out once per string ------------------
def test_regions_with_the_places_kept_are_the_regions_found_alone():
    """``changed_regions`` given ``piece_places(own)`` (kept per string for all its alternatives)
    answers what it answers working the places out itself: rewritten stretches, insertions,
    deletions, pieces out of order and a piece object that stands twice."""
    from sbatchlint.model.swaps import changed_regions, piece_places
    from sbatchlint.model.values import Piece

    own = tuple(Piece(t, None) for t in "abcdefg")
    new = [Piece("X", None), Piece("Y", None)]
    shapes = [
        own,
        own[:2] + (new[0],) + own[3:],
        (new[0],) + own[1:5] + (new[1],) + own[6:],
        own[:3] + tuple(new) + own[5:],
        own[:3] + own[4:],
        own[:3] + (new[0],) + own[3:],
        own[:2] + (own[4], own[3], own[2]) + own[5:],
        own[:-1],
        own + (new[0],),
    ]
    twice = own[:3] + (own[1],) + own[4:]
    for pieces in shapes:
        assert changed_regions(own, pieces, piece_places(own)) == changed_regions(own, pieces), pieces
        assert changed_regions(twice, pieces, piece_places(twice)) == changed_regions(twice, pieces)
    assert changed_regions(own, shapes[1]) == [(2, 3, 2, 3)]
    assert changed_regions(twice, shapes[1]) is None


def test_an_alternatives_layout_made_along_the_strings_is_the_one_it_computes():
    """``layout_along`` makes an alternative's layout from its string's outside the changed
    regions: the same bytes and offsets as the alternative renders itself, unknown pieces
    (``${NAME}``) and text of other lengths and encodings included."""
    from sbatchlint.model.swaps import changed_regions, layout_along
    from sbatchlint.model.values import Piece, Value

    own = (Piece("python t.py --save ", None), Piece("", None, known=False, name="W"), Piece("/ckpt --tp ", None),
           Piece("2", None), Piece(" --name é", None), Piece("", None, known=False, name="N"))
    rewrites = [
        {1: [Piece("/workspace", None)]},
        {1: [Piece("", None, known=False, name="WORK")], 3: [Piece("16", None)]},
        {0: [Piece("torchrun ", None)], 5: [Piece("ünï", None), Piece("x", None)]},
        {3: [Piece("", None, known=False, name="TP")]},
    ]
    for rewrite in rewrites:
        string = Value(own)
        pieces = []
        for index, piece in enumerate(own):
            pieces.extend(rewrite.get(index, [piece]))
        alternative = Value(tuple(pieces))
        regions = changed_regions(string.pieces, alternative.pieces)
        assert regions
        assert layout_along(string, alternative, regions) == Value(tuple(pieces))._compute_layout()
        assert alternative.text == "".join(p.render() for p in pieces)


# -- launches: the primary alternative is the launch's own reading ---------------------------------
PRIMARY_SHAPES = [
    "srun torchrun --nproc_per_node=8 --nnodes=2 train.py --tp 2\n",
    'for TP in 1 2 4; do\n  srun bash -c "torchrun --nproc_per_node=8 t.py --tp $TP"\ndone\n',
    'GPUS=${GPUS:-8}\nsrun bash -c "torchrun --nproc_per_node ${G:-4} t.py --save ${W:-/ws}/c"\n',
    'if [ -n "$A" ]; then L=torchrun; else L=python; fi\nsrun $L t.py --tp 2\n',
    "export LAUNCHER='python -m torch.distributed.run --nproc_per_node 8'\nsrun bash -c '$LAUNCHER t.py --pp 2'\n",
    'for N in 1 2; do\n  srun bash -c "cd /w; python a.py; torchrun --nnodes=$N b.py"\ndone\n',
]


def _reading(launch):
    return (launch.kind, [w.text for w in launch.launcher], [(o.name, o.text) for o in launch.options],
            launch.entry.name if launch.entry else None, [w.text for w in launch.args], launch.options_incomplete)


@pytest.mark.parametrize("body", PRIMARY_SHAPES)
def test_the_primary_variant_is_what_reading_the_primary_alternative_gives(body):
    """The launch stands for its primary alternative among its variants without reading that
    command again: reading it gives the launch's own reading, and every other alternative is
    read as before (each variant's reading is that of its alternative)."""
    from sbatchlint.model import launch as launch_model

    script = script_of(body)
    launches = script.launches
    assert launches
    for launch in launches:
        step = launch.step
        assert launch.variants[-1] is launch
        index = step.task_commands.index(next(c for c in step.task_commands if c.node == launch.command.node))
        workdir = launch_model._workdir(script, step, step.task_commands[index])
        again = launch_model.recognise(step, launch_model._inherited(script, step, step.task_commands[index]), workdir)
        assert _reading(again)[:-1] == _reading(launch)[:-1]
        if launch.command.in_string:
            alternatives = launch_model._string_variants(script, step, index)
        else:
            alternatives = [launch_model.Command(launch.command.node, argv, launch.command.env, False, step)
                            for argv in launch_model._argv_variants(launch.command.argv, script.values.globbing)]
        read = [launch_model.recognise(step, launch_model._inherited(script, step, c), workdir) for c in alternatives]
        expected = [_reading(v) for v in read if v is not None and v.kind == launch.kind][:-1]
        assert [_reading(v) for v in launch.variants[:-1]] == expected


# -- early expansions: each entry judged when first asked --------------------------------------------
EARLY_SHAPES = [
    # a loop's alternatives of a long string, rewritten in a redirection and in an argument
    "PORT=${APP_PORT:-7000}\nfor LOG in /a /bbb/c; do\n"
    'CMD="(server --port $PORT) &\nwhile ! (echo > /dev/tcp/localhost/$PORT) 2>/dev/null; do sleep 1; done\n'
    'touch $LOG/${SLURM_JOB_ID}/ready_\\$(hostname)\npython t.py --rank $SLURM_PROCID --job $SLURM_JOB_ID"\n'
    'srun bash -c "$CMD"\ndone\n',
    # quoted for the task's shell: not expanded by it there
    "srun bash -c \"echo '$SLURM_PROCID' && python t.py --node $SLURM_NODEID\"\n",
    # also used by the batch shell, exported, on the command line
    'OUT=/x/$SLURM_JOB_ID\nmkdir -p "$OUT"\nsrun bash -c "cd $OUT && python t.py --rank $SLURM_PROCID"\n',
    'export CMD="python t.py --rank $SLURM_PROCID"\nsrun bash -c "$CMD"\n',
    "srun python t.py --rank $SLURM_PROCID --job $SLURM_JOB_ID\n",
    "srun bash <<EOF\npython t.py --rank $SLURM_PROCID --host $(hostname)\nEOF\n",
]


def _judged(entries):
    return [(e.name, e.site, e.blocker, e.reason, e.escapable) for e in entries]


@pytest.mark.parametrize("body", EARLY_SHAPES)
def test_early_expansions_judged_late_are_judged_as_at_once(body):
    """Each entry is judged when first asked, sharing what the script's entries share: asked in
    any order, after the rules ran, it gets what judging it alone on a fresh model gives."""
    from sbatchlint.model import boundary

    late = script_of(body)
    lint_text(HEADER + body)  # (the rules on another model: nothing shared)
    entries = late.early_expansions
    assert entries
    judged = {id(e): (e.blocker, e.reason, e.escapable) for e in reversed(entries)}
    for index, entry in enumerate(entries):
        fresh = script_of(body)
        alone = fresh.early_expansions[index]
        blocker, reason = boundary._escapable(fresh, alone, [], {})
        assert (alone.name, alone.site) == (entry.name, entry.site)
        assert judged[id(entry)] == (blocker, reason, not blocker)


def test_the_early_shapes_meet_every_judgement():
    seen = {e.blocker for body in EARLY_SHAPES for e in script_of(body).early_expansions}
    assert seen == {"", "task-quoting", "elsewhere", "command-line"}


def test_early_expansions_are_not_judged_unless_asked():
    """Listing the early expansions parses no alternative of a task string: only judging an
    entry (whether the task's shell expands it there) does."""
    body = EARLY_SHAPES[0]
    script = script_of(body)
    trees = script.values.task_memo.trees
    script.steps
    before = set(trees)
    entries = script.early_expansions
    assert set(trees) == before and all("blocker" not in e.__dict__ for e in entries)
    [e.escapable for e in entries]
    assert len(trees) > len(before)


# -- launches: a variant whose words up to the entry point are the launch's own ---------------------
AGAIN_SHAPES = [
    'for TP in 1 2 4; do\n  srun bash -c "python -m torch.distributed.run --nproc_per_node=8 --nnodes=$SLURM_NNODES'
    ' t.py --tp $TP --pp 2"\ndone\n',
    "for TP in 1 2; do\n  srun uv run python t.py --tp $TP\ndone\n",
    "for N in 1 2; do\n  srun torchrun --standalone --nproc_per_node $N\ndone\n",
    "for N in 1 2; do\n  srun torchrun --nproc_per_node $N t.py\ndone\n",
    "for D in /a /b; do\n  srun apptainer exec --pwd $D img.sif python t.py --x 1\ndone\n",
    "for C in 'print(1)' 'print(2)'; do\n  srun python -c \"$C\" --x\ndone\n",
    'for A in "t.py --a" "u.py"; do\n  srun bash -c "torchrun --nnodes=2 $A --b"\ndone\n',
    'for E in 1 2; do\n  srun bash -c "X=$E torchrun --nnodes=2 t.py; deepspeed --num_gpus $E t.py"\ndone\n',
    'for TP in 1 2; do\n  srun bash -c "Y=/a/$HOME X=$TP torchrun --nnodes=2 t.py --tp $TP"\ndone\n',
    # empty pieces next to the words, from values the loop rewrites with values of the same length
    'for P in 1 2; do\n  if [ -n "$A" ]; then Z=""; fi\n'
    '  srun bash -c "torchrun --nnodes=2 ${Z}t.py${Z} --pp $P${Z} --x ${Z}"\ndone\n',
]


def _launch_words(launch):
    def words(ws):
        return [(id(w), w.value, w.span) for w in ws]

    return (launch.step, launch.command, launch.kind, words(launch.launcher),
            [(o.name, o.written, words(o.words), o.value) for o in launch.options],
            (launch.entry.kind, words(launch.entry.words)) if launch.entry else None, words(launch.args),
            launch.options_incomplete, launch.index, launch.workdir)


@pytest.mark.parametrize("body", AGAIN_SHAPES)
def test_a_variant_read_off_its_launch_is_what_reading_it_gives(body):
    """``_Again`` gives a variant whose argv holds the launch's own words up to its entry point
    the launch's reading with the variant's arguments: what ``recognise`` reads of it."""
    from sbatchlint.model import launch as launch_model

    script = script_of(body)
    launches = script.launches
    assert launches and any(len(launch.variants) > 1 for launch in launches)
    for launch in launches:
        step = launch.step
        index = next(i for i, c in enumerate(step.task_commands) if c.node == launch.command.node)
        workdir = launch_model._workdir(script, step, step.task_commands[index])
        for variant in launch.variants[:-1] + launch.others:
            again = launch_model.recognise(step, variant.command, workdir)
            assert again is not None and _launch_words(variant) == _launch_words(again)


def test_the_again_shapes_read_variants_off_their_launch(monkeypatch):
    from sbatchlint.model import launch as launch_model

    calls = []
    real = launch_model.recognise
    monkeypatch.setattr(launch_model, "recognise", lambda *a: calls.append(a) or real(*a))
    launches = script_of(AGAIN_SHAPES[0]).launches
    assert len(launches) == 1 and len(launches[0].variants) == 3 and len(calls) == 1


@pytest.mark.parametrize("body", ["srun torchrun --nnodes=2 --standalone\n", "srun torchrun --nnodes=2 t.py --tp 2\n",
                                  "srun python -c 'print(1)'\n"])
def test_a_variant_with_more_or_fewer_words_is_read_again(body):
    """A launch read to the end of its argv says nothing of a variant with more words after the
    same ones: that one is read in full (and so is one with fewer words)."""
    from sbatchlint.model import launch as launch_model

    script = script_of(body)
    (launch,) = script.launches
    command = launch.command
    extra = script_of("srun x.py\n").steps[0].task_commands[0].argv
    for argv in (command.argv + extra, command.argv[:-1]):
        variant = launch_model.Command(command.node, argv, command.env, False, launch.step)
        found = launch_model._Again(launch)(launch.step, variant, None)
        again = launch_model.recognise(launch.step, variant, None)
        assert (found is None) == (again is None)
        if found is not None:
            assert _launch_words(found) == _launch_words(again)


@pytest.mark.parametrize("body", AGAIN_SHAPES)
def test_a_task_string_command_keeping_the_steps_words_is_what_mapping_it_gives(body):
    """``_command_in`` keeps the step's own mapped word where the alternative holds the same
    pieces: each word is what ``command_in`` maps anew."""
    from sbatchlint.model import launch as launch_model
    from sbatchlint.model.steps import parsed_task_string

    script = script_of(body)
    for step in script.steps:
        if step.task_string is None:
            continue
        parse = parsed_task_string(script.values, step.task_string)
        alternatives = [w for w in step.task_argv if w.alternatives and w.value.pieces == step.task_string.pieces]
        for word in alternatives:
            for alternative in word.alternatives:
                for index in range(len(step.task_commands)):
                    fast = launch_model._command_in(parse, alternative, index, step)
                    full = parse.command_in(alternative, index, step)
                    assert [(w.value, w.span, w.alternatives) for w in fast.argv] == [
                        (w.value, w.span, w.alternatives) for w in full.argv]
                    assert [(e.name, e.value, e.span) for e in fast.env] == [(e.name, e.value, e.span) for e in full.env]


# -- early expansions: the uses of a variable found per name ---------------------------------------
USE_SHAPES = [
    # names inside others' names, defaults, lengths, indirection, arrays, nested expansions
    'A=1\nAB=2\nB_A=3\necho "${AB:-0} $AB ${A%x}" $A\necho "$A $AB ${B_A} ${#A} ${A:-$AB} ${!AB} ${ARR[$A]}"\n'
    'CMD="python t.py --rank $SLURM_PROCID --a $A"\nsrun bash -c "$CMD"\n',
    # words the grammar cuts at a bare ``$``: their ``$NAME`` is in no expansion node
    "X=$A/b_$C.d\nY=/x/rank_$C\nsrun bash -c \"echo $X $C\"\n",
    # names whose bytes appear outside their expansions, and in a longer name's
    'NAME=1\nFULL_NAME=2\necho "NAME $NAME ${FULL_NAME}"\nsrun bash -c "echo ${NAME} \\$FULL_NAME"\n',
]


def _all_uses(script):
    """The uses of every variable at once: what ``_Flows`` collected before it asked per name."""
    from sbatchlint import shell

    uses = {}
    for node in script.nodes_of_type("simple_expansion", "expansion"):
        for child in node.named_children:
            if child.type == "variable_name":
                uses.setdefault(shell.text(child, script.data), []).append(node)
                break
    hidden = shell.hidden_expansions(script.node_index, script.data)
    for expansion in hidden:
        uses.setdefault(expansion.name, []).append(expansion.dollar)
    for name in {expansion.name for expansion in hidden}:
        uses[name].sort(key=lambda node: node.start_byte)
    return uses


@pytest.mark.parametrize("body", USE_SHAPES)
def test_the_uses_of_a_name_found_alone_are_those_found_for_every_name(body):
    from sbatchlint.model import boundary

    script = script_of(body)
    every = _all_uses(script)
    assert len(every) >= 2
    # (past boundary._ALONE names, the flows read every name at once: both ways are met)
    names = [*every, "MISSING", "\ufffd"]
    for flows, name in [(flows, name) for flows, order in ((boundary._Flows(script), names),
                                                           (boundary._Flows(script), names[::-1])) for name in order]:
        found = flows.uses_of(name)
        assert [(n.start_byte, n.end_byte, n.type) for n in found] == [
            (n.start_byte, n.end_byte, n.type) for n in every.get(name, [])], name
        assert [n.start_byte for n in flows.uses_of(name)] == [n.start_byte for n in found]  # (asked again)


def test_the_use_shapes_hold_hidden_expansions():
    from sbatchlint import shell

    assert any(shell.hidden_expansions(script_of(b).node_index, script_of(b).data) for b in USE_SHAPES)


# -- launches: a parallelism size's number, kept ----------------------------------------------------
def test_a_parallel_sizes_number_kept_is_the_integer_its_value_gives():
    from sbatchlint.model import launch as launch_model

    body = ('for TP in 1 2; do\n  srun bash -c "torchrun --nnodes=2 t.py --tp $TP --pp 2 '
            'model.context_parallel_size=${CP:-2} --expert-model-parallel-size x"\ndone\n')
    script = script_of(body)
    seen = []
    for launch in launch_model.launches(script):
        for variant in launch.variants or [launch]:
            for size in variant.parallelism.values():
                first = size.number
                assert first == launch_model.as_int(size.value) and size.number == first
                seen.append(first)
    assert 1 in seen and 2 in seen and None in seen


# -- the swapped words of an alternative task string, kept per pair ---------------------------------
SWAP_SHAPES = [
    # of the same length (1 / 4), of another (16), the same text twice (1), a rewritten name
    'for TP in 1 4 16 1; do\n  srun bash -c "torchrun --nnodes=2 t.py --tp $TP --pp 2"\ndone\n',
    'for A in ab cd; do\n  for B in 1 2; do\n    srun bash -c "python t.py --a $A --b $B; echo $A"\n  done\ndone\n',
    'for P in x.py yy.py; do\n  srun bash -c "$P --x 1"\ndone\n',
]


def _positions(found):
    return None if found is None else [(n.start_byte, n.end_byte) for n in found]


@pytest.mark.parametrize("body", SWAP_SHAPES)
def test_swapped_words_kept_are_those_found_anew(body):
    """``kept_swapped_words`` answers each (string, alternative) as ``swapped_words`` does, asked
    in any order and again, after the rules asked it too."""
    from sbatchlint.model.steps import task_tree
    from sbatchlint.model.swaps import kept_swapped_words, swapped_words

    for linted in (False, True):
        script = script_of(body)
        if linted:
            script.steps
            script.launches
            [e.escapable for e in script.early_expansions]
        pairs = []
        for step in script.steps:
            string = step.task_string
            if string is None or step.string_word is None:
                continue
            for alternative in step.string_word.alternatives or ():
                pairs.append((string, alternative))
        assert len(pairs) >= 2
        results = set()
        for string, alternative in pairs + pairs[::-1]:
            root = task_tree(script.values, string.text.encode("utf-8")).root_node
            kept = _positions(kept_swapped_words(script.values, root, string, alternative))
            fresh = _positions(swapped_words(root, string, alternative))
            assert kept == fresh
            results.add(None if fresh is None else tuple(fresh))
        assert len(results) >= 2  # (different answers for the alternatives of one string)


# -- step geometry: the header's --ntasks-per-node read once per script -------------------------------
GEOMETRY_SHAPES = [
    "#SBATCH --ntasks-per-node=4\nsrun python a.py\nsrun --nodes=1 python b.py\nsrun --ntasks=3 python c.py\n",
    "#SBATCH --ntasks=16\nsrun python a.py\nsrun --nodes=2 python b.py\n",
    "#SBATCH --ntasks=8\n#SBATCH --ntasks-per-node=x\nsrun python a.py\nsrun --ntasks-per-node=2 python b.py\n",
]


def _geometry_facts(geo):
    return [(q.value, repr(q.origin)) for q in (geo.nodes, geo.ntasks, geo.tasks_per_node, geo.gpus_per_node, geo.cpus_per_task)]


@pytest.mark.parametrize("body", GEOMETRY_SHAPES)
def test_step_geometry_with_the_header_count_kept_is_the_one_read_anew(body, monkeypatch):
    from sbatchlint.model import geometry as geometry_model

    kept = script_of(body)
    facts = [_geometry_facts(geometry_model.geometry(kept, step)) for step in kept.steps]
    monkeypatch.setattr(geometry_model, "_header_per_node",
                        lambda script: geometry_model._header_count(script, "ntasks-per-node"))
    fresh = script_of(body)
    assert facts == [_geometry_facts(geometry_model.geometry(fresh, step)) for step in fresh.steps]
    assert _geometry_facts(kept.job_geometry) == _geometry_facts(fresh.job_geometry)
