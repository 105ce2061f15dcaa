"""A step's container read from what each variant of its srun words changes (``_variants``),
against every variant read in full (``_alternative_steps``), on shapes written for the purpose."""
from __future__ import annotations

import random

import pytest

from sbatchlint.model import containers as container_model
from sbatchlint.model.script import Script
from sbatchlint.source import Source

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n"
IMAGE = "--container-image=nvcr.io/nvidia/pytorch:25.01-py3"

SHAPES = [
    # one expansion's words, each replaced by every other value of it (with and without mounts)
    'ARGS="--mpi=pmix"\nif [ -n "$X" ]; then ARGS+=" --container-mounts=/a:/a"; fi\n'
    f'ARGS+=" {IMAGE} --container-workdir=/w -p batch -A acct"\nsrun $ARGS --nodes=1 python t.py\n',
    'M=/data:/data\nif [ -n "$X" ]; then M="$M,$HOME/c:/root/.cache"; fi\n'
    f'A="--no-container-mount-home --container-mounts=$M {IMAGE}"\nsrun $A --container-name=n -o log bash -c "python t.py"\n',
    # a value word of a two-word option, pyxis or not
    f'if [ -n "$X" ]; then M=/a:/a; else M=/b:/b,/c:/c; fi\nsrun {IMAGE} --container-mounts $M python t.py\n',
    f'if [ -n "$X" ]; then L=/lustre/a.log; else L=/lustre/b.log; fi\nsrun --output $L {IMAGE} --container-mounts=/x:/x python t.py\n',
    f'if [ -n "$X" ]; then L="a b"; else L=c; fi\nsrun -o $L {IMAGE} --container-mounts=/x:/x python t.py\n',
    # values that split into several words or none, at an option and at a value
    'if [ -n "$X" ]; then E=""; else E="--container-mounts=/e:/e --container-workdir=/e"; fi\n'
    f'srun $E {IMAGE} --container-mounts=/x:/x python t.py\n',
    f'if [ -n "$X" ]; then V=""; else V=/v; fi\nsrun -o $V {IMAGE} --container-mounts=/x:/x python t.py\n',
    f'if [ -n "$X" ]; then V=""; else V=/v; fi\nsrun --container-mounts=/p:/p -o $V --container-mounts=/x:/x {IMAGE} python t.py\n',
    # a value whose words end the options, or whose last word takes the next as its value
    f'if [ -n "$X" ]; then O="--exclusive python"; else O="-p"; fi\nsrun $O {IMAGE} --container-mounts=/x:/x python t.py\n',
    f'if [ -n "$X" ]; then O="-- env"; else O="--mpi=none --"; fi\nsrun $O {IMAGE} --container-mounts=/x:/x python t.py\n',
    f'if [ -n "$X" ]; then O="--mpi=none --"; else O="--exclusive"; fi\nsrun $O --container-mounts=/x:/x {IMAGE} python t.py\n',
    f'if [ -n "$X" ]; then O="--container-mounts"; else O="-N"; fi\nsrun $O /z:/z {IMAGE} --container-mounts=/x:/x python t.py\n',
    # the image, the name, the workdir and the home mount only in another value
    'if [ -n "$X" ]; then C="--container-image=a.sqsh --container-mount-home"; else C="--container-name=n --no-container-mount-home"; fi\n'
    'srun --container-workdir=/w $C --container-mounts=/x:/x python t.py\n',
    'if [ -n "$X" ]; then W="--container-workdir=/a --container-mounts=/a:/a"; else W="--container-workdir=/b"; fi\n'
    'srun $W --container-image=x python t.py\n',
    # srun itself in the expansion, and wrappers before it
    f'if [ -n "$X" ]; then S="srun --nodes=1"; else S="srun {IMAGE} --container-mounts=/s:/s"; fi\n$S python t.py\n',
    f'if [ -n "$X" ]; then T=10; else T=20; fi\ntimeout $T srun {IMAGE} --container-mounts=/x:/x python t.py\n',
    f'if [ -n "$X" ]; then M=/a:/a; fi\ntimeout 10 srun {IMAGE} --container-mounts=$M python t.py\n',
    # several flags, the last of the primary dropped by another value
    f'if [ -n "$X" ]; then Q="--container-mounts=/q:/q"; else Q="-o"; fi\n'
    f'srun --container-mounts=/p:/p {IMAGE} $Q --container-mounts=/r:/r python t.py\n',
    f'if [ -n "$X" ]; then Q="--exclusive"; else Q="--container-mounts=/q:/q"; fi\n'
    f'srun --container-mounts=/p:/p {IMAGE} $Q python t.py\n',
    # unknown words among the options, and a loop that builds the value
    f'for m in /a /b /c; do MS="$MS${{MS:+,}}$m:$m"; done\nsrun {IMAGE} $EXTRA --container-mounts=$MS python t.py\n',
    f'case "$1" in a) P="--container-mounts=${{ROOT}}/a:/a";; b) P="--container-mounts=/b:/b $OPTS";; esac\n'
    f'srun {IMAGE} $P --export=ALL,K=1 python t.py\n',
]


def _shape(container):
    """Every field of a step's container, the options' places among the mount options included
    (which flag a mount comes from is told by identity)."""
    options = container.mount_options

    def place(opt):
        return next((i for i, other in enumerate(options) if other is opt), None)

    return {
        "image": (container.image, place(container.image)),
        "name": container.name,
        "workdir": container.workdir,
        "mount_home": container.mount_home,
        "pyxis": container.pyxis_options,
        "mount_options": options,
        "distinct": len({id(o) for o in options}),
        "mounts": [(m.source, m.destination, m.flags, m.option, place(m.option), m.value, m.span) for m in container.mounts],
        "environment": (container.environment_mounts, container.environment_env, container.from_environment),
    }


def _script(body: str) -> Script:
    return Script(Source((HEADER + body).encode(), "job.sh"))


@pytest.mark.parametrize("body", SHAPES)
def test_a_container_read_from_what_variants_change_is_the_one_read_in_full(body):
    script = _script(body)
    assert script.steps
    for step in script.steps:
        full = container_model._step_container(script, step, shortcut=False)
        fast = container_model._step_container(script, step, shortcut=True)
        assert _shape(fast) == _shape(full)


def test_the_shapes_take_the_shortcut_and_its_way_around():
    """The shapes above exercise both: variants known by what they change, and variants read in full."""
    kinds = set()
    for body in SHAPES:
        script = _script(body)
        for step in script.steps:
            for variant in container_model._variants(script, step):
                kinds.add(variant.__class__.__name__)
    assert kinds == {"_Variant", "Step"}


@pytest.mark.parametrize("body", SHAPES)
def test_a_variant_context_gives_what_its_pieces_give(body):
    """What each site brought into a variant's argv, from the step's own figures, is what
    indexing the variant's pieces gives."""
    script = _script(body)
    for step in script.steps:
        for variant in container_model._variants(script, step):
            if variant.__class__ is not container_model._Variant:
                continue
            argv, index = variant.argv, variant.index
            pieces = ([p for w in argv[:index] for p in w.pieces] + [p for part in variant.parts for p in part.pieces]
                      + [p for w in argv[index + 1 :] for p in w.pieces])
            whole = container_model.SiteExtents(pieces)
            context = variant.context()
            for piece in pieces:
                for site in piece.via:
                    assert context.site_extents().get(site) == whole.get(site)


def test_a_cover_answers_what_its_integral_gives():
    """``_Cover.covers`` takes a span that is one of the run's own as covered without the
    integral: what the integral gives for it."""
    rng = random.Random(7)
    for _ in range(300):
        spans = {}
        for _ in range(rng.randint(1, 6)):
            start = rng.randint(0, 30)
            key = (start, start + rng.randint(0, 6))
            spans[key] = spans.get(key, 0) + 1
        cover = container_model._Cover(spans)
        for _ in range(5):
            part = {}
            for _ in range(rng.randint(1, 4)):
                key = rng.choice(list(spans)) if rng.random() < 0.5 else (lambda s: (s, s + rng.randint(0, 6)))(rng.randint(0, 30))
                part[key] = 1
            by_integral = all(cover._integral(end) - cover._integral(start) >= end - start for start, end in part)
            assert cover.covers(part) == by_integral


# -- the searches a step's container skips when the script cannot give them anything --------------
LOOP_SHAPES = [
    f'MOUNTS=/a,/b\nARGS=""\nfor m in ${{MOUNTS//,/ }}; do ARGS="$ARGS --container-mounts=$m:$m"; done\nsrun {IMAGE} $ARGS python t.py\n',
    f'ARGS=""\nwhile read m; do ARGS+=" --container-mounts=$m"; done < list\nsrun {IMAGE} $ARGS python t.py\n',
    f'for i in 1 2; do\n  srun {IMAGE} --container-mounts=/d$i:/d python t.py\ndone\n',
    f'ARGS="--container-mounts=/a:/a"\nfor i in 1 2; do echo $i; done\nsrun {IMAGE} $ARGS python t.py\n',
    f'# for m in x; do --container-mounts\nsrun {IMAGE} --container-mounts=/a:/a python t.py\n',
    f'source ./env.sh\nsrun {IMAGE} $MOUNT_ARGS python t.py\n',
    f'srun {IMAGE} python t.py\n',
    # a step in a loop that writes the flag on it, reading flags another loop appends
    f'for i in 1 2; do ARGS="$ARGS --container-mounts=/d$i:/d$i"; done\n'
    f'for j in 1 2; do\n  srun {IMAGE} --container-mounts=/e:/e $ARGS python t.py\ndone\n',
]


@pytest.mark.parametrize("body", LOOP_SHAPES)
def test_a_loop_built_flag_is_searched_only_where_a_loop_writes_the_flag(body, monkeypatch):
    script = _script(body)
    found = [container_model.loop_built_flags(script, step, "container-mounts") for step in script.steps]
    monkeypatch.setattr(container_model, "_may_loop", lambda script, flag: True)
    assert found == [container_model.loop_built_flags(script, step, "container-mounts") for step in script.steps]


def test_the_loop_shapes_find_a_loop_built_flag():
    found = [container_model.loop_built_flags(s, step, "container-mounts") for s in map(_script, LOOP_SHAPES[:2]) for step in s.steps]
    assert found and all(flags is not None for flags in found)


ENVIRONMENT_SHAPES = [
    f'export PYXIS_CONTAINER_IMAGE=nvcr.io/nvidia/pytorch:25.01-py3\nexport PYXIS_CONTAINER_MOUNTS=/a:/a\nsrun python t.py\n',
    'PYXIS_CONTAINER_WORKDIR=/w PYXIS_CONTAINER_MOUNT_HOME=0 srun --container-image=x python t.py\n',
    'export PYXIS_CONTAINER_NAME=n\nsrun --container-name=m --no-container-mount-home python t.py\n',
    f'srun {IMAGE} --container-mounts=/a:/a python t.py\n',
    'OTHER=1 srun --container-image=x python t.py\n',
]


@pytest.mark.parametrize("body", ENVIRONMENT_SHAPES)
def test_pyxis_variables_are_read_only_where_the_script_sets_one(body, monkeypatch):
    script = _script(body)
    steps = script.steps
    fast = [_shape(container_model._step_container(script, step)) for step in steps]
    monkeypatch.setattr(container_model, "_reads_pyxis_environment", lambda script, step: True)
    assert fast == [_shape(container_model._step_container(script, step)) for step in steps]


def test_the_environment_shapes_take_options_from_the_environment():
    script = _script(ENVIRONMENT_SHAPES[0])
    container = container_model._step_container(script, script.steps[0])
    assert container.image is not None and container.mounts


PATH_WORDS = SHAPES + LOOP_SHAPES + ENVIRONMENT_SHAPES + [
    f'srun {IMAGE} python t.py --data /lustre/d --out=$HOME/x ${{HOME}} ~/y key=/a:/b,/c url=s3://b/k HOME=${{HOME}}\n',
]


@pytest.mark.parametrize("body", PATH_WORDS)
def test_a_word_without_a_slash_is_no_path(body):
    """``_word_paths`` skips a word with neither ``/`` nor ``${HOME}``: what reading it gives."""
    script = _script(body)
    for command in script.commands:
        for word in command.argv:
            assert container_model._word_paths(word) == container_model._value_paths(word.value, word.text)
    for step in script.steps:
        for command in step.task_commands:
            for word in command.argv:
                assert container_model._word_paths(word) == container_model._value_paths(word.value, word.text)


def test_a_sourced_files_loop_is_searched_at_the_source_command(tmp_path, monkeypatch):
    """An assignment a sourced file makes stands at the script's ``source`` command: a loop
    around that command is what the search looks for."""
    (tmp_path / "env.sh").write_text('for m in a b; do ARGS="$ARGS --container-mounts=$m:$m"; done\n')
    for job in (
        "#!/bin/bash\nsource ./env.sh\nsrun --container-image=x $ARGS python t.py\n",
        "#!/bin/bash\nfor i in 1; do source ./env.sh # --container-mounts\ndone\nsrun --container-image=x $ARGS python t.py\n",
    ):
        (tmp_path / "job.sh").write_text(job)
        script = Script(Source(job.encode(), str(tmp_path / "job.sh")))
        assert script.values.sourced
        found = [container_model.loop_built_flags(script, step, "container-mounts") for step in script.steps]
        monkeypatch.setattr(container_model, "_may_loop", lambda script, flag: True)
        assert found == [container_model.loop_built_flags(script, step, "container-mounts") for step in script.steps]
        monkeypatch.undo()


# -- a value cut at its known separators; what each site brought, counted in one pass --------------
def _split_by_bytes(value, separator):
    """``split_value`` as a walk over each known piece's bytes (what it stands for)."""
    from sbatchlint.model.values import Value

    parts = [[]]
    for piece in value.pieces:
        if not piece.known or separator not in piece.text:
            parts[-1].append(piece)
            continue
        raw = piece.render().encode("utf-8")
        start = 0
        sub = Value((piece,))
        for index, byte in enumerate(raw):
            if byte == ord(separator):
                if index > start:
                    parts[-1].extend(sub.slice(start, index).pieces)
                parts.append([])
                start = index + 1
        if start < len(raw):
            parts[-1].extend(sub.slice(start, len(raw)).pieces)
    return [Value(tuple(p)) for p in parts]


SPLIT_SHAPES = SHAPES + [
    'M="/dä:/d,,$HOME/x:/y:ro,"\nsrun --container-image=x --container-mounts=$M,/z:/z python t.py\n',
    'A=/a\nsrun --container-image=x --container-mounts=":$A::$A," python t.py\n',
]


@pytest.mark.parametrize("body", SPLIT_SHAPES)
def test_a_value_is_cut_where_its_bytes_hold_the_separator(body):
    script = _script(body)
    for step in script.steps:
        for word in step.command.argv:
            for separator in (",", ":"):
                assert container_model.split_value(word.value, separator) == _split_by_bytes(word.value, separator)


@pytest.mark.parametrize("body", SPLIT_SHAPES)
def test_what_each_site_brought_is_what_its_pieces_give(body):
    script = _script(body)
    for step in script.steps:
        pieces = container_model.command_pieces(step.command)
        extents = container_model.SiteExtents(pieces)
        for piece in pieces:
            for site in piece.via:
                brought = {id(p): p for p in pieces if site in p.via}
                assert extents.get(site) == container_model._extent(list(brought.values()))
