"""Secrets: what SBL401–SBL403 report and what they must not, the fixes, and redaction end to end.

Every token here is FAKE, generated from a repeated pattern so that it has a real credential's
shape without being one.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from lintutil import fix_text, lint_text, said
from sbatchlint import redaction, secrets
from sbatchlint.source import Source, Span

HF = "hf_" + "A1b2" * 9
GH = "ghp_" + "Zz9Y" * 9
GHO = "gho_" + "Qq7W" * 9
GH_FINE = "github_pat_" + "11AB" * 6 + "_" + "cD3e" * 15
AWS = "AKIA" + "Q7RT" * 4
AWS_SECRET = "wJal" + "rX9/" * 9
OPENAI = "sk-proj-" + "Ab3d" * 12
WANDB = "0a1b2c3d4e" * 4
PASSWORD = "Tr0ub4dor-" + "x7Q"
GITLAB = "glpat-" + "Gl7q" * 5  # the classic form: 20 URL-safe characters
GITLAB_ROUTABLE = "glpat-" + "R0ut" * 10 + ".01." + "k3" + "m9x2p7q"  # the newer, longer form with dots
GITLAB_JOB = "glcbt-" + "6f_" + "Jb4w" * 5
GITLAB_JOB_JWT = "glcbt-" + "eyJ" + "hBg9" * 6 + "." + "eyJ" + "pL0w" * 10 + "." + "Sg7u" * 8
GITLAB_DEPLOY = "gldt-" + "Dp2z" * 5
GITLAB_RUNNER = "glrt-" + "Rn8v" * 5
SLACK_BOT = "xoxb-" + "1029384756" + "-" + "5647382910123" + "-" + "Sk9d" * 6
SLACK_USER = "xoxp-" + "1029384756-1029384757-1029384758-" + "a7f3" * 8
SLACK_REFRESH = "xoxe-1-" + "My0x" * 30
SLACK_CONFIG = "xoxe.xoxp-1-" + "Mi0y" * 40
SLACK_HOOK = "T0" + "FAKE0001" + "/B0" + "FAKE0002" + "/" + "Wh9k" * 6  # the secret path of a webhook URL
HOOK_URL = "https://hooks.slack.com/services/" + SLACK_HOOK
NEW_SHAPES = [
    (GITLAB, "GitLab access token"),
    (GITLAB_ROUTABLE, "GitLab access token"),
    (GITLAB_JOB, "GitLab CI job token"),
    (GITLAB_JOB_JWT, "GitLab CI job token"),
    (GITLAB_DEPLOY, "GitLab deploy token"),
    (GITLAB_RUNNER, "GitLab runner token"),
    (SLACK_BOT, "Slack token"),
    (SLACK_USER, "Slack token"),
    (SLACK_REFRESH, "Slack token"),
    (SLACK_CONFIG, "Slack token"),
]
ALL_TOKENS = [HF, GH, GHO, GH_FINE, AWS, AWS_SECRET, OPENAI, WANDB, PASSWORD] + [t for t, _ in NEW_SHAPES] + [SLACK_HOOK]

HEAD = "#!/bin/bash\n#SBATCH --nodes=1\n"
REF = "${%s:?set %s in the environment before sbatch}"


def hidden(source: Source):
    """The values every output about ``source`` hides."""
    return redaction.values(source, secrets.find(source))


def ref(name: str) -> str:
    return REF % (name, name)


def found(body: str, code: str):
    return [d for d in lint_text(HEAD + body, [code]) if d.code == code]


# -- SBL401 hardcoded-secret ---------------------------------------------------------------------

FIRES = [
    ("export HF_TOKEN=%s\n" % HF, "Hugging Face token"),
    ("declare -x GH_TOKEN='%s'\n" % GH, "GitHub token"),
    ('GITHUB_TOKEN="%s"\n' % GH_FINE, "GitHub fine-grained token"),
    ("git clone https://me:%s@github.com/org/repo.git\n" % GHO, "GitHub token"),
    ("export AWS_ACCESS_KEY_ID=%s\n" % AWS, "AWS access key"),
    ("export AWS_SECRET_ACCESS_KEY=%s\n" % AWS_SECRET, "AWS secret access key"),
    ("OPENAI_API_KEY=%s\n" % OPENAI, "OpenAI-style API key"),
    ("export WANDB_API_KEY=%s\n" % WANDB, "W&B API key"),
    ("wandb login %s\n" % WANDB, "W&B API key"),
    ("wandb login --relogin %s\n" % WANDB, "W&B API key"),
    ("HF_TOKEN=%s python fetch.py\n" % HF, "Hugging Face token"),
    ("env WANDB_API_KEY=%s python train.py\n" % WANDB, "W&B API key"),
    ("srun --export=ALL,HF_TOKEN=%s python fetch.py\n" % HF, "Hugging Face token"),
    ("sbatch --export=ALL,MY_SERVICE_TOKEN=q8Zr0pLm4kTw next.sh\n", "token"),
    ("srun bash -c \"HF_TOKEN=%s python fetch.py\"\n" % HF, "Hugging Face token"),
    ("srun bash -c \"export MY_API_KEY=abcd1234efgh; python fetch.py\"\n", "API key"),
    ("DB_PASSWORD=%s\n" % PASSWORD, "password"),
    ("CLIENT_SECRET='q8Zr0pLm'\n", "secret"),
    ("python upload.py --hf-token %s\n" % HF, "Hugging Face token"),
    ("python upload.py --api-key=abcdef123456\n", "API key"),
    ("HF_TOKEN=${HF_TOKEN:-%s}\n" % HF, "Hugging Face token"),
    ("python train.py logger.wandb.api_key=%s\n" % WANDB, "API key"),
    ("cat > ~/.netrc <<EOF\nmachine hub password %s\nEOF\n" % HF, "Hugging Face token"),
    # GitLab
    ("export GITLAB_TOKEN=%s\n" % GITLAB, "GitLab access token"),
    ("git clone https://oauth2:%s@gitlab.com/org/data.git\n" % GITLAB, "GitLab access token"),
    ("git clone https://oauth2:%s@gitlab.com/org/data.git\n" % GITLAB_ROUTABLE, "GitLab access token"),
    ("git clone https://gitlab-ci-token:%s@gitlab.example.org/g/p.git\n" % GITLAB_JOB, "GitLab CI job token"),
    ("curl -sf -H \"JOB-TOKEN: %s\" https://gitlab.example.org/api/v4/jobs\n" % GITLAB_JOB_JWT, "GitLab CI job token"),
    ("srun --export=ALL,DEPLOY_PASSWORD=%s python fetch.py\n" % GITLAB_DEPLOY, "GitLab deploy token"),
    ("gitlab-runner register --url https://gitlab.example.org --token %s\n" % GITLAB_RUNNER, "GitLab runner token"),
    ("srun bash -c \"curl --header PRIVATE-TOKEN:%s https://gitlab.com/api/v4/projects\"\n" % GITLAB, "GitLab access token"),
    ("#SBATCH --export=ALL,GITLAB_TOKEN=%s\nsrun hostname\n" % GITLAB, "GitLab access token"),
    ("cat > ~/.netrc <<EOF\nmachine gitlab.com login oauth2 password %s\nEOF\n" % GITLAB, "GitLab access token"),
    # Slack
    ("export SLACK_BOT_TOKEN=%s\n" % SLACK_BOT, "Slack token"),
    ('curl -s -H "Authorization: Bearer %s" https://slack.com/api/auth.test\n' % SLACK_USER, "Slack token"),
    ("python notify.py --slack-token %s\n" % SLACK_REFRESH, "Slack token"),
    ("MANIFEST_TOKEN='%s'\n" % SLACK_CONFIG, "Slack token"),
    ("srun --export=ALL,SLACK_TOKEN=%s python train.py\n" % SLACK_BOT, "Slack token"),
    ("curl -s -d '{\"text\": \"done\"}' %s\n" % HOOK_URL, "Slack webhook URL"),
    ("SLACK_WEBHOOK_URL=%s\n" % HOOK_URL, "Slack webhook URL"),
    ('srun bash -c "python train.py && curl -s -d done %s"\n' % HOOK_URL, "Slack webhook URL"),
]


@pytest.mark.parametrize("body,kind", FIRES, ids=[f"fires{i}" for i in range(len(FIRES))])
def test_hardcoded_secret_fires(body, kind):
    diagnostics = found(body, "SBL401")
    assert len(diagnostics) == 1, [d.message for d in diagnostics]
    assert kind in diagnostics[0].message
    for token in ALL_TOKENS:
        assert token not in diagnostics[0].message
        assert token not in (diagnostics[0].help or "")
        if diagnostics[0].fix is not None:
            assert token not in diagnostics[0].fix.description


SILENT = [
    "HF_TOKEN=hf_your_token_here\n",
    'HF_TOKEN="<YOUR_HF_TOKEN>"\n',
    "WANDB_API_KEY=changeme\n",
    "HF_TOKEN=xxxxxxxxxxxxxxxxxxxx\n",
    "HF_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
    "API_KEY='***'\n",
    "HF_TOKEN=\n",
    'HF_TOKEN=""\n',
    "HF_TOKEN=$HUGGING_FACE_HUB_TOKEN\n",
    "export HF_TOKEN=${HF_TOKEN:?set HF_TOKEN before sbatch}\n",
    "export HF_TOKEN=$(cat ~/.cache/huggingface/token)\n",
    "wandb login\n",
    'wandb login "$WANDB_API_KEY"\n',
    "# export HF_TOKEN=%s\n" % HF,
    "# wandb login %s\n" % WANDB,
    "echo done  # old key: %s\n" % GH,
    'PAD_TOKEN="[PAD]"\nEOS_TOKEN="</s>"\n',
    "MAX_TOKEN=512\n",
    "HF_TOKEN_PATH=/run/secrets/hf_token\nSECRET_FILE=~/.secret\n",
    "PASSWORD_LENGTH=16\n",
    "USE_AUTH_TOKEN=true\n",
    "TOKENIZER=meta-llama/Llama-3.1-8B\n",
    "python train.py --pad-token '<pad>' --max-new-tokens 512\n",
    "git checkout %s\n" % WANDB,  # a commit hash has the W&B key's shape but no context
    "srun --export=ALL,HF_TOKEN python fetch.py\n",
    "srun --container-image=img --container-env=HF_TOKEN,WANDB_API_KEY python fetch.py\n",
    "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n",
    # near misses of the GitLab and Slack shapes
    "GLPAT_FILE=$HOME/.config/glpat\nexport GITLAB_GLPAT_PATH=/run/secrets/glpat\n",
    "export glpat_dir=/scratch/glpat-cache\n",
    "git clone https://gitlab.com/org/data.git\npip install git+https://gitlab.com/org/tools.git@v1.2\n",
    "python train.py --run-name glpat-sweep-lr3e4 --tags gldt-ablation\n",
    "GITLAB_TOKEN=glpat-xxxxxxxxxxxxxxxxxxxx\n",
    "GITLAB_TOKEN='glpat-<your token>'\n",
    "export CI_JOB_TOKEN=$CI_JOB_TOKEN\n",
    "# the bot needs a xoxb- token in SLACK_BOT_TOKEN\nsrun hostname\n",
    'echo "set SLACK_BOT_TOKEN to your xoxb- token first"\n',
    "SLACK_BOT_TOKEN=xoxb-your-bot-token\n",
    "python notify.py --channel xoxb-alerts-channel-name\n",
    "SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX\n",
    "curl -s -d done https://hooks.slack.com/services/\n",
    'curl -s -d done "${SLACK_WEBHOOK_URL:?set SLACK_WEBHOOK_URL}"\n',
    "export SLACK_BOT_TOKEN=$(cat ~/.slack_token)\n",
    "# old runner token: %s\n" % GITLAB_RUNNER,
    "# webhook: %s\n" % HOOK_URL,
]


@pytest.mark.parametrize("body", SILENT, ids=[f"silent{i}" for i in range(len(SILENT))])
def test_hardcoded_secret_silent(body):
    assert not found(body, "SBL401"), [d.message for d in found(body, "SBL401")]


@pytest.mark.parametrize("token,kind", NEW_SHAPES, ids=[f"shape{i}" for i in range(len(NEW_SHAPES))])
def test_gitlab_and_slack_shapes(token, kind):
    shape = redaction.shape_of(token)
    assert shape is not None and shape.kind == kind
    for before, after in (("", ""), ("x ", " y"), ('"', '"'), ("=", ";"), ("oauth2:", "@gitlab.com/g/p")):
        text = before + token + after
        assert [(s.kind, text[a:b]) for s, a, b in redaction.shapes_in(text)] == [(kind, token)]


def test_slack_webhook_shape_is_the_path():
    text = "curl -d done %s\n" % HOOK_URL
    assert [(s.kind, text[a:b]) for s, a, b in redaction.shapes_in(text)] == [("Slack webhook URL", SLACK_HOOK)]
    (diagnostic,) = found("curl -s -d done %s\n" % HOOK_URL, "SBL401")
    source = Source((HEAD + "curl -s -d done %s\n" % HOOK_URL).encode())
    assert source.text(diagnostic.span) == SLACK_HOOK  # the host stays visible, the path is masked
    assert diagnostic.fix is None and "`T0F…`" in diagnostic.message


@pytest.mark.parametrize(
    "text",
    [
        "glpat-",
        "glpat-personal-access-token-here",
        "xoxb-",
        "xoxb-my-bot-token",
        "xoxb-1234567890-your-token-here",
        "xoxp-0000000000-0000000000",
        "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "https://gitlab.com/org/project/-/merge_requests/12",
        "GLPAT_TOKEN_FILE my_glpat-" + "Gl7q" * 5,
    ],
)
def test_gitlab_and_slack_near_misses_are_no_shape(text):
    assert list(redaction.shapes_in(text)) == []


def test_slack_token_names_are_secret_names():
    # SLACK_BOT_TOKEN / SLACK_USER_TOKEN are credentials, not tokenizer entries like BOT_TOKEN
    assert redaction.is_secret_name("SLACK_BOT_TOKEN") and redaction.is_secret_name("SLACK_USER_TOKEN")
    assert not redaction.is_secret_name("BOT_TOKEN") and not redaction.is_secret_name("EOS_TOKEN")
    assert found("export SLACK_BOT_TOKEN=$(cat ~/.slack)\necho $SLACK_BOT_TOKEN\n", "SBL402")


def test_commented_gitlab_and_slack_tokens_are_redacted():
    body = "# export GITLAB_TOKEN=%s\n# notify: %s\n# %s\nsrun hostname\n" % (GITLAB, HOOK_URL, SLACK_BOT)
    source = Source((HEAD + body).encode())
    values = hidden(source)
    assert GITLAB in values and SLACK_HOOK in values and SLACK_BOT in values
    assert not [s for s in secrets.find(source) if s.live]


def test_commented_secret_is_still_redacted():
    source = Source((HEAD + "# export HF_TOKEN=%s\n# wandb login %s\nsrun hostname\n" % (HF, WANDB)).encode())
    values = hidden(source)
    assert HF in values and WANDB in values
    assert not [s for s in secrets.find(source) if s.live]


def test_text_scan_reads_a_source_again_when_its_bytes_change():
    source = Source((HEAD + "# HF_TOKEN=%s\n" % HF).encode())
    first = redaction.text_scan(source)
    assert [s.value for s in first] == [HF]
    first.clear()  # the caller's list is its own: the next answer is whole
    assert [s.value for s in redaction.text_scan(source)] == [HF]
    source.data = (HEAD + "# GH_TOKEN=%s\n" % GH).encode()
    assert [s.value for s in redaction.text_scan(source)] == [GH]


FIXES = [
    ("export HF_TOKEN=%s\n" % HF, "export HF_TOKEN=%s\n" % ref("HF_TOKEN")),
    ("export HF_TOKEN='%s'\n" % HF, 'export HF_TOKEN="%s"\n' % ref("HF_TOKEN")),
    ("AUTH='Bearer %s'\n" % HF, "AUTH='Bearer '\"%s\"\n" % ref("HF_TOKEN")),
    ("HF_TOKEN=${HF_TOKEN:-%s}\n" % HF, "HF_TOKEN=%s\n" % ref("HF_TOKEN")),
    ("python upload.py --token %s\n" % HF, 'python upload.py --token "%s"\n' % ref("HF_TOKEN")),
    ("wandb login %s\n" % WANDB, "wandb login\n"),
    ('wandb login --relogin "%s" && echo ok\n' % WANDB, "wandb login && echo ok\n"),
    ("srun --export=ALL,HF_TOKEN=%s python fetch.py\n" % HF, "srun --export=ALL,HF_TOKEN python fetch.py\n"),
    (
        "srun --container-image=img --container-env=HF_TOKEN=%s python fetch.py\n" % HF,
        "srun --container-image=img --container-env=HF_TOKEN python fetch.py\n",
    ),
    ("srun --export ALL,WANDB_API_KEY=%s python train.py\n" % WANDB, "srun --export ALL,WANDB_API_KEY python train.py\n"),
    (
        'srun bash -c "python fetch.py --token %s"\n' % HF,
        'srun bash -c "python fetch.py --token \\%s"\n' % ref("HF_TOKEN"),
    ),
    (
        "srun bash -c 'python fetch.py --token %s'\n" % HF,
        "srun bash -c 'python fetch.py --token %s'\n" % ref("HF_TOKEN"),
    ),
    ('srun bash -c "wandb login %s && python train.py"\n' % WANDB, 'srun bash -c "wandb login && python train.py"\n'),
    (
        "git clone https://oauth2:%s@gitlab.com/org/data.git\n" % GITLAB,
        'git clone https://oauth2:"%s"@gitlab.com/org/data.git\n' % ref("GITLAB_TOKEN"),
    ),
    ("export SLACK_BOT_TOKEN=%s\n" % SLACK_BOT, "export SLACK_BOT_TOKEN=%s\n" % ref("SLACK_BOT_TOKEN")),
    (
        'curl -s -H "Authorization: Bearer %s" https://slack.com/api/auth.test\n' % SLACK_BOT,
        'curl -s -H "Authorization: Bearer %s" https://slack.com/api/auth.test\n' % ref("SLACK_TOKEN"),
    ),
    ("srun --export=ALL,GITLAB_TOKEN=%s python fetch.py\n" % GITLAB, "srun --export=ALL,GITLAB_TOKEN python fetch.py\n"),
]


@pytest.mark.parametrize("body,fixed", FIXES, ids=[f"fix{i}" for i in range(len(FIXES))])
def test_hardcoded_secret_fix(body, fixed):
    assert fix_text(HEAD + body, ["SBL401"]) == HEAD + body, "the fix is unsafe"
    after = fix_text(HEAD + body, ["SBL401"], unsafe=True)
    assert after == HEAD + fixed
    assert not found(fixed, "SBL401")


def test_directive_export_fix_drops_the_value():
    text = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --export=ALL,HF_TOKEN=%s\nsrun hostname\n" % HF
    assert fix_text(text, ["SBL401"], unsafe=True) == "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --export=ALL,HF_TOKEN\nsrun hostname\n"


def test_no_fix_where_a_reference_cannot_work():
    # inside single quotes at the task's level, ${…} would never expand
    body = "srun bash -c \"python -c 'print(1)' --x '%s'\"\n" % HF
    diagnostics = found(body, "SBL401")
    assert len(diagnostics) == 1 and diagnostics[0].fix is None


# -- realistic scripts (tests/fixtures/secrets; fake tokens are filled in here, never stored) ----------

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "secrets")
FILL = {"@HF@": HF, "@GH@": GH, "@WANDB@": WANDB, "@HF_OLD@": "hf_" + "Old9" * 9}


def fixture(name: str) -> str:
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        text = handle.read()
    for marker, token in FILL.items():
        text = text.replace(marker, token)
    return text


def findings(text: str):
    source = Source(text.encode())
    return sorted((d.code, source.position(d.span.start)[0]) for d in lint_text(text, ["SBL4"]))


def test_fixture_legacy_hardcoded():
    text = fixture("legacy_hardcoded.sh")
    assert findings(text) == [
        ("SBL401", 6),  # #SBATCH --export=ALL,GH_TOKEN=…
        ("SBL401", 8),  # export HF_TOKEN=…
        ("SBL401", 9),  # export WANDB_API_KEY=…
        ("SBL401", 11),  # wandb login --relogin KEY (the rotated key in the comment on line 10 is not live)
        ("SBL402", 12),  # echo of $WANDB_API_KEY
        ("SBL402", 16),  # $HF_TOKEN expanded into TRAIN_CMD
        ("SBL403", 8),  # traced by the shebang's -x
        ("SBL403", 9),
    ]
    fixed = fix_text(text, ["SBL4"], unsafe=True)
    for token in (HF, GH, WANDB):
        assert token not in fixed
    assert FILL["@HF_OLD@"] in fixed  # comments are left alone
    assert "export HF_TOKEN=%s\n" % ref("HF_TOKEN") in fixed
    assert "--hf-token \\$HF_TOKEN" in fixed
    assert "wandb login\n" in fixed and "#SBATCH --export=ALL,GH_TOKEN\n" in fixed
    # what remains is the tracing, which has no automatic fix
    assert {code for code, _ in findings(fixed)} == {"SBL403"}


def test_fixture_environment_secrets_clean():
    assert findings(fixture("bridge_sft_env_secrets.sh")) == []


def test_fixture_template_placeholders():
    text = fixture("template_placeholders.sh")
    assert findings(text) == []
    assert GH in hidden(Source(text.encode()))  # the commented-out token is still masked


# -- SBL402 secret-expanded-into-command ------------------------------------------------------------


def test_string_expansion_is_escaped():
    body = 'CMD="python fetch.py --token $HF_TOKEN"\nsrun bash -c "$CMD"\n'
    diagnostics = found(body, "SBL402")
    assert len(diagnostics) == 1 and diagnostics[0].fix is not None
    assert diagnostics[0].fix.applicability.value == "safe"
    assert fix_text(HEAD + body, ["SBL402"]) == HEAD + 'CMD="python fetch.py --token \\$HF_TOKEN"\nsrun bash -c "$CMD"\n'


def test_direct_bash_c_argument():
    body = 'srun bash -lc "huggingface-cli download org/m --token ${HF_TOKEN}"\n'
    assert fix_text(HEAD + body, ["SBL402"]) == HEAD + 'srun bash -lc "huggingface-cli download org/m --token \\${HF_TOKEN}"\n'
    body = 'bash -c "curl -H \'Authorization: $GH_TOKEN\' https://example.org"\n'
    assert len(found(body, "SBL402")) == 1


def test_not_exported_means_no_fix_and_says_so():
    body = 'HF_TOKEN=$(cat ~/.hf)\nsrun bash -c "python fetch.py --token $HF_TOKEN"\n'
    (diagnostic,) = found(body, "SBL402")
    assert diagnostic.fix is None and "export it first" in said(diagnostic)
    exported = 'export HF_TOKEN=$(cat ~/.hf)\nsrun bash -c "python fetch.py --token $HF_TOKEN"\n'
    (diagnostic,) = found(exported, "SBL402")
    assert diagnostic.fix is not None


def test_step_export_list_without_the_variable_means_no_fix():
    body = 'srun --export=NONE bash -c "python fetch.py --token $HF_TOKEN"\n'
    (diagnostic,) = found(body, "SBL402")
    assert diagnostic.fix is None and "--export" in said(diagnostic)


def test_single_quotes_at_task_level_mean_no_fix():
    body = "srun bash -c \"python -c 'import sys' --t '$WANDB_API_KEY'\"\n"
    (diagnostic,) = found(body, "SBL402")
    assert diagnostic.fix is None


def test_step_command_line_and_export_option():
    (diagnostic,) = found('srun python fetch.py --token "$HF_TOKEN"\n', "SBL402")
    assert diagnostic.fix is None and "srun command line" in diagnostic.message
    body = "srun --export=ALL,HF_TOKEN=$HF_TOKEN python fetch.py\n"
    assert fix_text(HEAD + body, ["SBL402"]) == HEAD + "srun --export=ALL,HF_TOKEN python fetch.py\n"


@pytest.mark.parametrize(
    "body",
    [
        'echo "token is $HF_TOKEN"\n',
        "printf '%s\\n' \"$WANDB_API_KEY\"\n",
        'echo "$HF_TOKEN" >&2\n',
        'srun bash -c "echo \\$HF_TOKEN"\n',
        "MY_KEY=%s\necho $MY_KEY\n" % HF,
    ],
)
def test_echo_fires(body):
    assert found(body, "SBL402")


@pytest.mark.parametrize(
    "body",
    [
        'echo "$HF_TOKEN" > "$HOME/.hf_token"\n',
        'echo "$GH_TOKEN" | gh auth login --with-token\n',
        'echo "token set: ${HF_TOKEN:+yes}, ${#HF_TOKEN} characters"\n',
        'N=$(echo "$HF_TOKEN" | wc -c)\n',
        'srun bash -c "python fetch.py --token \\$HF_TOKEN"\n',
        "srun --container-image=img --container-env=HF_TOKEN python fetch.py\n",
        "srun --export=ALL,HF_TOKEN python fetch.py\n",
        'echo "$HF_HOME $TOKENIZER_DIR"\n',
        'huggingface-cli login --token "$HF_TOKEN"\n',
        "printf -v AUTH 'Bearer %s' \"$HF_TOKEN\"\n",
        'echo "export HF_TOKEN=$HF_TOKEN" >> "$HOME/.job_env"\n',
    ],
)
def test_secret_use_silent(body):
    assert not found(body, "SBL402"), [d.message for d in found(body, "SBL402")]


def test_echo_fix_removes_the_line():
    body = 'echo "token is $HF_TOKEN"\nsrun hostname\n'
    assert fix_text(HEAD + body, ["SBL402"], unsafe=True) == HEAD + "srun hostname\n"
    assert fix_text(HEAD + body, ["SBL402"]) == HEAD + body


# -- SBL403 xtrace-with-secrets ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        HEAD + 'set -x\nhuggingface-cli login --token "$HF_TOKEN"\n',
        HEAD + 'set -euxo pipefail\nexport WANDB_API_KEY=$(cat ~/.wandb)\n',
        HEAD + 'set -o xtrace\nif [[ -n "$GH_TOKEN" ]]; then gh auth status; fi\n',
        "#!/bin/bash -ex\n#SBATCH --nodes=1\ncurl -H \"Authorization: Bearer $MY_API_KEY\" https://example.org\n",
        HEAD + 'srun bash -x -c "huggingface-cli login --token \\$HF_TOKEN"\n',
        HEAD + 'srun bash -c "set -x; python fetch.py --token \\$HF_TOKEN"\n',
        HEAD + 'CMD="python fetch.py --token $HF_TOKEN"\nset -x\nsrun bash -c "$CMD"\n',
    ],
)
def test_xtrace_fires(text):
    diagnostics = [d for d in lint_text(text, ["SBL403"]) if d.code == "SBL403"]
    assert len(diagnostics) == 1, [d.message for d in diagnostics]


@pytest.mark.parametrize(
    "text",
    [
        HEAD + 'set -euo pipefail\nhuggingface-cli login --token "$HF_TOKEN"\n',
        HEAD + 'set -x\nset +x\nhuggingface-cli login --token "$HF_TOKEN"\nset -x\nsrun hostname\n',
        HEAD + 'huggingface-cli login --token "$HF_TOKEN"\nset -x\nsrun hostname\n',
        HEAD + 'set -x\necho "token set: ${HF_TOKEN:+yes}"\n',
        HEAD + 'set -x\ncat > env.sh <<EOF\nexport HF_TOKEN=$HF_TOKEN\nEOF\n',
        HEAD + 'srun bash -x -c "python fetch.py"\n',
        HEAD + 'srun bash -c "set -x; set +x; python fetch.py --token \\$HF_TOKEN"\n',
    ],
)
def test_xtrace_silent(text):
    assert not [d for d in lint_text(text, ["SBL403"]) if d.code == "SBL403"]


def test_xtrace_reports_once_per_variable_and_region():
    text = HEAD + 'set -x\nA="$HF_TOKEN"\nB="$HF_TOKEN"\nC="$WANDB_API_KEY"\nset +x\nset -x\nD="$HF_TOKEN"\n'
    assert len([d for d in lint_text(text, ["SBL403"]) if d.code == "SBL403"]) == 3


# -- redaction -----------------------------------------------------------------------------------------


def test_redact_masks_gitlab_and_slack_shapes_it_was_not_told_about():
    text = "clone with %s, post to %s, bot %s, job %s" % (GITLAB_ROUTABLE, HOOK_URL, SLACK_BOT, GITLAB_JOB_JWT)
    redacted = redaction.redact(text)
    for token in (GITLAB_ROUTABLE, SLACK_HOOK, SLACK_BOT, GITLAB_JOB_JWT):
        assert token not in redacted and token[3:15] not in redacted
    assert "glp…" in redacted and "https://hooks.slack.com/services/T0F…" in redacted and "xox…" in redacted


def test_mask_and_redact():
    assert redaction.mask(HF) == "hf_…"
    text = f"token {HF} and half of it {HF[:20]} and a shape {GH}"
    redacted = redaction.redact(text, [HF])
    assert HF not in redacted and HF[:20] not in redacted and GH not in redacted
    assert "hf_…" in redacted
    assert redaction.redact("nothing here", [HF]) == "nothing here"


def test_redacting_stream():
    import io

    buffer = io.StringIO()
    stream = redaction.RedactingStream(buffer)
    stream.remember([PASSWORD])
    stream.write(f"a {PASSWORD} b\n")
    assert PASSWORD not in buffer.getvalue() and "Tr0…" in buffer.getvalue()


# -- end to end: the real command line never prints a secret ---------------------------------------------

E2E_TOKENS = [HF, GH, WANDB, AWS, OPENAI, PASSWORD, GH_FINE, GITLAB, GITLAB_JOB, GITLAB_DEPLOY, SLACK_BOT, SLACK_HOOK]
E2E_SCRIPT = f"""#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --export=ALL,GH_TOKEN={GH}
set -x
export HF_TOKEN={HF}
export DB_PASSWORD='{PASSWORD}'
# export OLD_TOKEN={GH_FINE}
# AWS key for the bucket: {AWS}
wandb login {WANDB}
echo "using $HF_TOKEN"
CMD="python train.py --openai-key {OPENAI} --token $HF_TOKEN"
srun bash -c "$CMD --hub-token {HF}"
export GITLAB_TOKEN={GITLAB}
git clone https://gitlab-ci-token:{GITLAB_JOB}@gitlab.example.org/g/p.git
# deploy token, rotated: {GITLAB_DEPLOY}
curl -s -H "Authorization: Bearer {SLACK_BOT}" https://slack.com/api/auth.test
curl -s -d '{{"text": "done"}}' {HOOK_URL}
"""


def _output_formats():
    from sbatchlint.cli import check

    option = next(p for p in check.params if p.name == "output_format")
    return list(option.type.choices)


def _run(args, cwd):
    env = dict(os.environ)
    env.pop("FORCE_COLOR", None)
    done = subprocess.run([sys.executable, "-m", "sbatchlint", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120)
    return done


def _assert_clean(done, label):
    for stream_name, text in (("stdout", done.stdout), ("stderr", done.stderr)):
        for token in E2E_TOKENS:
            assert token not in text, f"{label}: {stream_name} shows a secret"
            assert token[3:15] not in text, f"{label}: {stream_name} shows part of a secret"
    assert "Traceback" not in done.stderr, f"{label}: {done.stderr[-2000:]}"


def test_no_output_ever_shows_a_secret(tmp_path):
    script = tmp_path / "job.sh"
    script.write_text(E2E_SCRIPT)
    assert {d.code for d in lint_text(E2E_SCRIPT)} >= {"SBL401", "SBL402", "SBL403"}
    shown_masked = False
    formats = _output_formats()
    assert {"text", "concise", "json"} <= set(formats)
    for output_format in formats:
        done = _run([str(script), "--output-format", output_format], tmp_path)
        assert done.returncode in (0, 1), (output_format, done.stderr[-2000:])
        _assert_clean(done, output_format)
        shown_masked = shown_masked or "hf_…" in done.stdout
        if output_format == "text":  # the source line is shown with the webhook's host, its path masked
            assert "hooks.slack.com/services/T0F…" in done.stdout
        if output_format in ("text", "json"):
            for masked in ("glp…", "glc…", "xox…", "T0F…"):
                assert masked in done.stdout, (output_format, masked)
    assert shown_masked, "the masked form appears in no output"
    for extra in (["--diff"], ["--diff", "--unsafe-fixes"], ["--statistics"], ["--select", "SBL4", "-q"]):
        done = _run([str(script), *extra], tmp_path)
        _assert_clean(done, " ".join(extra))
    done = _run([str(script), "--diff", "--unsafe-fixes"], tmp_path)
    assert "hf_…" in done.stdout  # the diff shows the removed line, masked
    for extra in (["--fix"], ["--fix", "--unsafe-fixes"]):
        copy = tmp_path / ("copy%d.sh" % len(extra))
        shutil.copy(script, copy)
        for output_format in formats:
            shutil.copy(script, copy)
            done = _run([str(copy), *extra, "--output-format", output_format], tmp_path)
            _assert_clean(done, " ".join(extra) + " " + output_format)
    # the fixed file no longer holds the live credentials (the commented ones stay, masked in output)
    fixed = (tmp_path / "copy2.sh").read_text()
    for token in (HF, GH, WANDB, OPENAI, PASSWORD, GITLAB, GITLAB_JOB, SLACK_BOT):
        assert token not in fixed
    # several files in worker processes
    batch = tmp_path / "many"
    batch.mkdir()
    for index in range(5):
        shutil.copy(script, batch / f"job{index}.sh")
    for output_format in formats:
        _assert_clean(_run([str(batch), "-j", "2", "--output-format", output_format], tmp_path), "-j 2 " + output_format)
    # stdin, explain, rules
    done = subprocess.run([sys.executable, "-m", "sbatchlint", "-", "--stdin-filename", "job.sh"], input=E2E_SCRIPT,
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    _assert_clean(done, "stdin")
    for args in (["explain", "SBL401"], ["explain", HF], ["rules"]):
        _assert_clean(_run(args, tmp_path), " ".join(args[:1]))


def test_variable_names_are_not_masked_after_the_escape_fix(tmp_path):
    # SBL402's fix escapes the batch shell's expansions in a task string (`\$WANDB_API_KEY`):
    # that is a variable's name for the task's shell, not a value, and outputs print it as it is
    script = tmp_path / "job.sh"
    script.write_text(
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
        "export WANDB_API_KEY=$(cat ~/.wandb_key)\nexport DB_PASSWORD=$(cat ~/.db)\n"
        'srun --kill-on-bad-exit=1 bash -c "export DB_PASSWORD=$DB_PASSWORD; wandb login $WANDB_API_KEY && python train.py"\n'
        'echo "key: $WANDB_API_KEY"\n'
    )
    done = _run([str(script), "--fix"], tmp_path)
    fixed = script.read_text()
    assert "wandb login \\$WANDB_API_KEY" in fixed and "DB_PASSWORD=\\$DB_PASSWORD" in fixed
    for args in ([], ["--output-format", "json"], ["--diff", "--unsafe-fixes"]):
        done = _run([str(script), *args], tmp_path)
        output = done.stdout + done.stderr
        assert "WANDB_API_KEY" in output, args
        for masked in ("WAN…", "$WA…", "\\$W…", "DB_…", "\\$D…"):
            assert masked not in output, (args, masked)
    done = _run([str(script)], tmp_path)
    assert "prints $WANDB_API_KEY into the job log" in done.stdout
    assert 'srun --kill-on-bad-exit=1 bash -c "export DB_PASSWORD=\\$DB_PASSWORD; wandb login \\$WANDB_API_KEY' in done.stdout


def test_an_internal_error_does_not_show_a_secret(monkeypatch, tmp_path):
    from sbatchlint import runner
    from sbatchlint.linter import Options

    script = tmp_path / "job.sh"
    script.write_text(E2E_SCRIPT)

    def broken(source, options=None):
        raise ValueError(f"cannot handle {HF}")

    monkeypatch.setattr(runner, "lint", broken)
    result = runner.run_job(runner.Job(str(script), "job.sh", Options()))
    assert result.error and "internal error" in result.error and HF not in result.error


def test_a_crash_traceback_does_not_show_a_secret(capsys):
    import io

    stream = redaction.RedactingStream(io.StringIO())
    stream.remember([HF])
    hook = redaction.redacting_excepthook(stream)
    try:
        raise RuntimeError(f"unexpected value {HF}")
    except RuntimeError as err:
        hook(type(err), err, err.__traceback__)
    printed = capsys.readouterr().err
    assert "RuntimeError" in printed and HF not in printed and "hf_…" in printed


def test_reporters_import_no_model():
    # the output formats, the runner's redaction and the command line's streams read text only
    code = (
        "import sys\n"
        "import sbatchlint.redaction, sbatchlint.report\n"
        "from sbatchlint.report import FORMATS, formatter\n"
        "for name in FORMATS: formatter(name)\n"
        "loaded = [m for m in sys.modules if m.startswith(('sbatchlint.model', 'sbatchlint.secrets', "
        "'sbatchlint.shell', 'sbatchlint.rules', 'tree_sitter', 'libcst'))]\n"
        "print(loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_every_format_renders_without_building_a_model(monkeypatch, tmp_path):
    import io

    from sbatchlint import runner
    from sbatchlint.linter import Options
    from sbatchlint.model import script as script_module
    from sbatchlint.report import FORMATS, formatter

    path = tmp_path / "job.sh"
    path.write_text(E2E_SCRIPT)
    result = runner.run_job(runner.Job(str(path), "job.sh", Options()))
    assert result.error is None and result.diagnostics and result.secret_spans

    def no_model(*args, **kwargs):
        raise AssertionError("a reporter built a model")

    monkeypatch.setattr(script_module.Script, "__init__", no_model)
    for name in FORMATS:
        out = io.StringIO()
        formatter(name)([result], out)
        text = out.getvalue()
        for token in E2E_TOKENS:
            assert token not in text and token[3:15] not in text, (name, token)
        if name == "text":  # code frames show the source lines with each secret span masked
            assert "export HF_TOKEN=hf_…" in text


def test_redaction_before_the_model_is_built(monkeypatch, tmp_path):
    # a model that cannot be built still leaves the run with every secret the text shows
    from sbatchlint import runner
    from sbatchlint.linter import Options

    path = tmp_path / "job.sh"
    path.write_text(E2E_SCRIPT)

    def broken(source, options=None):
        raise ValueError(f"cannot read {HF} or {GITLAB}")

    monkeypatch.setattr(runner, "build", broken)
    result = runner.run_job(runner.Job(str(path), "job.sh", Options()))
    assert "internal error" in result.error
    assert HF not in result.error and GITLAB not in result.error and "hf_…" in result.error


# -- the whole-file pre-tests (a file with no secret-named word is not searched command by command)
def _opaque() -> str:
    return "".join("Q7vLm2xP9kR4tW8zN3bY6cF1"[(i * 7) % 24] for i in range(24))


@pytest.mark.parametrize(
    "line",
    [
        "srun python train.py --Hub-Token={v}\n",  # mixed case: the pre-test ignores case
        "srun python train.py --DB-PASSWD {v}\n",
        "ARGS=\"--api-key {v}\"\nsrun python train.py $ARGS\n",  # the name arrives through a variable
    ],
)
def test_secret_named_options_found_in_any_case(line):
    text = "#!/bin/bash\n#SBATCH --nodes=1\n" + line.format(v=_opaque())
    assert [d.code for d in lint_text(text, ["SBL401"])] == ["SBL401"]


def test_secret_variable_printed_only_inside_a_task_string():
    # the variable's `$` and name meet only in the string the task's shell runs
    text = (
        "#!/bin/bash\n#SBATCH --nodes=1\nexport WANDB_API_KEY\nD='$'\n"
        "srun bash -c \"echo ${D}WANDB_API_KEY\"\n"
    )
    found = lint_text(text, ["SBL402"])
    assert [d.code for d in found] == ["SBL402"]
    assert "WANDB_API_KEY" in found[0].message


def test_no_secret_words_no_findings():
    text = "#!/bin/bash\n#SBATCH --nodes=1\nexport HF_HOME=/lustre/hf\nsrun python train.py --tp 2\necho done $SLURM_JOB_ID\n"
    assert lint_text(text, ["SBL401", "SBL402", "SBL403"]) == []


def test_secret_name_words_read_as_the_patterns_they_replace():
    """``secret_name_kind`` reads a name's words from sets; the patterns those sets replace are
    the specification, compared here on every combination of their words with others."""
    import itertools
    import re

    from sbatchlint import redaction

    last = r"_(?:" + "|".join(sorted(redaction._NOT_A_SECRET_LAST)) + r")$"
    first = r"^(?:" + "|".join(sorted(redaction._NOT_A_SECRET_FIRST)) + r")_"
    vocabulary = r"(?:^|_)(?<!SLACK_)(?:" + "|".join(sorted(redaction._TOKENIZER_WORDS)) + r")_TOKEN$"
    key = r"(?:API_?KEY|ACCESS_KEY|PRIVATE_KEY|AUTH_KEY|SECRET_KEY)$"

    def reference(name):
        n = redaction.normalize_name(name)
        if not n or re.search(last, n) or re.search(first, n):
            return None
        if n.endswith("TOKEN"):
            return None if re.search(vocabulary, n) else "token"
        if re.search(key, n):
            return "key"
        if "SECRET" in n:
            return "secret"
        if "PASSWORD" in n or "PASSWD" in n:
            return "password"
        return None

    words = sorted({"TOKEN", "KEY", "API", "APIKEY", "SECRET", "PASSWORD", "PASSWD", "SLACK", "MYSLACK", "HF", "XTOKEN",
                    "ACCESS", "AUTH", "WANDB", "PATHS", "", *list(redaction._NOT_A_SECRET_LAST)[:8],
                    *list(redaction._NOT_A_SECRET_FIRST)[:6], *list(redaction._TOKENIZER_WORDS)[:8], "PAD", "BOT"})
    names = ["_".join(parts) for size in (1, 2, 3) for parts in itertools.product(words, repeat=size)]
    names += ["hf-token", "wandb.api_key", "--slack-bot-token", "my__pad__token", "Tokenizer_PAD_Token", "a-b-c"]
    assert len(names) > 10000
    redaction.secret_name_kind.cache_clear()
    differ = [n for n in names if redaction.secret_name_kind(n) != reference(n)]
    assert differ == []


# -- the command-word pre-test: a command's argv is evaluated only when a word may name a secret --
#
# Each script below mentions a secret-looking word in a comment, so the whole-file test passes and
# each command's own pre-test decides. The name reaches the command's words through variables:
# whole, or cut between a variable's value and the text beside it.
_NAMED_THROUGH_VALUES = [
    "P=TOK\npython3 fetch.py --${P}EN={v}\n",  # cut between the value and the text after it
    "P=--hub-to\npython3 fetch.py ${P}ken={v}\n",  # the option's dashes and half its name
    "A=hub_\nB=TOKEN\npython3 fetch.py --$A$B {v}\n",  # two values side by side
    'P=TOK\npython3 fetch.py "--${P}EN={v}"\n',  # in double quotes
    "N=${N:-api_key}\npython3 fetch.py --$N={v}\n",  # the variable's own default
    "F=--api\nF+=_key\npython3 fetch.py $F {v}\n",  # appended to
    "if [ -n \"$X\" ]; then K=xx; else K=to; fi\npython3 fetch.py --${K}ken={v}\n",  # one branch's value
    "python3 fetch.py --${UNSET_PART:-hub_to}ken={v}\n",  # a default operand
    "P='se'\nQ=cr\npython3 fetch.py --${P}${Q}et={v}\n",  # a hint across three parts
    "W=wan\n$W'db' login {v}\n",  # the program itself
    "C=\"--to\"\nD=$C\npython3 fetch.py ${D}ken={v}\n",  # through a chain of variables
    "python3 fetch.py --hub-to\\ken={v}\n",  # an escaped letter
    'P=to\npython3 fetch.py "--${P}\\\nken={v}"\n',  # a line continuation inside quotes
    "A=(x --api)\npython3 fetch.py ${A[*]}_key {v}\n",  # an array's elements as one string
    "A=(x)\nA+=(--api)\npython3 fetch.py ${A[*]}_key {v}\n",  # an array appended to
    "for o in --hub_to; do python3 fetch.py ${o}ken={v}; done\n",  # a loop's value
    "P=TOK\npython3 fetch.py --${P}EN {v}\n",  # the name ends with the word
    "P=hub_token\npython3 fetch.py --$P={v}\n",  # the value ends the name
    "K=token\nQ=x\npython3 fetch.py --hf_$K {v} $Q\n",  # the value ends the word
    "P=--hub\npython3 fetch.py ${P}_token__={v}\n",  # separators a name drops after it
    "P=--api\npython3 fetch.py ${P}_KEY {v}\n",  # KEY where the word ends
    "A=(--hub_token)\npython3 fetch.py ${A[@]} {v}\n",  # an array's element
    "Q=x\npython3 fetch.py --a${HF_TOKEN}={v} $Q\n",  # an unknown's name ends the option's
    "P=--hub_token\npython3 fetch.py ${P}$(true)={v}\n",  # an unknown value after it: ``${?}``
    "A=(--hub_token {v})\npython3 fetch.py ${A[*]}x\n",  # a space between elements ends it
]


def _all_commands_scanned(monkeypatch):
    monkeypatch.setattr(secrets._HintFlow, "may_hold_hint", lambda self, command: True)


@pytest.mark.parametrize("body", _NAMED_THROUGH_VALUES, ids=[f"through{i}" for i in range(len(_NAMED_THROUGH_VALUES))])
def test_secret_name_built_from_values_is_found(body, monkeypatch):
    text = "#!/bin/bash\n#SBATCH --nodes=1\n# rotate the token monthly\n" + body.replace("{v}", _opaque())
    found = lint_text(text, ["SBL401"])
    assert [d.code for d in found] == ["SBL401"]
    quick = [(d.code, d.span, said(d)) for d in found]
    secrets_found = [(s.span, s.name) for s in secrets.find(Source(text.encode(), "job.sh"))]
    _all_commands_scanned(monkeypatch)
    assert [(d.code, d.span, said(d)) for d in lint_text(text, ["SBL401"])] == quick
    assert [(s.span, s.name) for s in secrets.find(Source(text.encode(), "job.sh"))] == secrets_found


_NO_NAME_THROUGH_VALUES = [
    "P=hub\npython3 fetch.py --${P}-size={v}\n",
    "P=TOK\npython3 fetch.py --${P}ENIZER={v}\n",  # a tokenizer option, not a token
    "L=/lustre/run\nfor f in a b; do python3 fetch.py --out=$L/$f {v}; done\n",
    "S=$(date +%s)\npython3 fetch.py --tag=run_$S {v}\n",
    "T=to\npython3 fetch.py --$T-ken {v}\n",  # the dash keeps the halves apart
    "P=TOKEN_x\npython3 fetch.py --${P%_x}={v}\n",  # a trim: the model leaves it unknown
    "A=(tok)\npython3 fetch.py --${A[0]}en={v}\n",  # an element: unknown too
    'P=TO\npython3 fetch.py "--${P}\\KEN={v}"\n',  # the backslash stays inside double quotes
    "T=llama\npython3 fetch.py --tokenizer-model $T --key-file=/k {v}\n",  # tokenizer, key file
    "P=TOKEN\npython3 fetch.py --${P}IZER-type={v}\n",  # a hint a value ends, continued
]


@pytest.mark.parametrize("body", _NO_NAME_THROUGH_VALUES, ids=[f"plain{i}" for i in range(len(_NO_NAME_THROUGH_VALUES))])
def test_commands_without_a_secret_name_give_what_the_full_scan_gives(body, monkeypatch):
    text = "#!/bin/bash\n#SBATCH --nodes=1\n# rotate the token monthly\n" + body.replace("{v}", _opaque())
    quick = [said(d) for d in lint_text(text, ["SBL401", "SBL402"])]
    assert quick == []
    _all_commands_scanned(monkeypatch)
    assert [said(d) for d in lint_text(text, ["SBL401", "SBL402"])] == quick


def test_pre_test_passes_commands_that_may_name_a_secret_and_only_those():
    from sbatchlint.model.script import Script

    def verdicts(body):
        text = "#!/bin/bash\n# token\n" + body
        script = Script(Source(text.encode(), "job.sh"))
        return [secrets._may_name_a_secret(c) for c in script.commands if c.program == "python3"]

    for body in _NAMED_THROUGH_VALUES:
        if "python3" in body:
            assert verdicts(body.replace("{v}", "x")) == [True], body
    assert verdicts("P=hub\npython3 fetch.py --${P}-size=1\n") == [False]
    # ``token``/``key`` that a letter or digit continues end no name (``--tokenizer-model``)
    assert verdicts("T=llama\npython3 fetch.py --tokenizer-model $T --keyfile=/k\n") == [False]
    assert verdicts("python3 fetch.py --tokenizer-model llama --vocab-tokens 5\n") == [False]
    assert verdicts("T=llama\npython3 fetch.py --hub-token $T\n") == [True]
    assert verdicts("P=TOK\npython3 fetch.py --${P}EN\n") == [True]
    assert verdicts("T=to\npython3 fetch.py --$T-ken 1\n") == [False]
    assert verdicts("S=$(date +%s)\npython3 fetch.py --tag=run_$S\n") == [False]


def test_every_secret_name_holds_a_hint_the_command_pre_test_looks_for():
    """The command pre-test skips a command whose bytes hold no ``token``/``key`` where a name may
    end (no letter or digit after it) and no ``secret``, ``passw`` or ``wandb``: every name
    ``is_secret_name`` accepts, followed by what may end it in a word, holds one."""
    import itertools

    from sbatchlint import redaction

    words = ["TOKEN", "KEY", "API", "APIKEY", "SECRET", "PASSWORD", "PASSWD", "HF", "XTOKEN", "ACCESS", "AUTH",
             "PRIVATE", "TOKENS", "KEYS", "ID", "PAD", "SLACK", "BOT", "izer", "1", ""]
    names = ["_".join(parts) for size in (1, 2, 3) for parts in itertools.product(words, repeat=size)]
    names += [n.replace("_", sep) for n in names[:400] for sep in ("-", ".", "")]
    checked = 0
    for name in names:
        if not redaction.is_secret_name(name):
            continue
        for written in (name, "--" + name, name + "=v", name + "_=v", name + ".-=", name.lower(), name.upper()):
            if not written.strip("-"):
                continue
            assert secrets._NAME_HINT_BYTES.search(written.lower().encode()), written
            checked += 1
    assert checked > 1000


@pytest.mark.parametrize("name", ["HF_TOKEN", "hub_token", "WANDB_API_KEY", "Db_Password", "MY_SECRET_X", "TOKEN"])
@pytest.mark.parametrize("operator", [":-", "-", ":=", "="])
def test_a_fallback_of_any_secret_name_is_found_past_the_byte_test(name, operator, monkeypatch):
    """``${NAME:-literal}`` of a secret variable: the byte test that skips other expansions lets
    every such one through (what a scan of every expansion finds)."""
    text = "#!/bin/bash\n#SBATCH --nodes=1\nX=${%s%s%s}\nsrun python t.py\n" % (name, operator, _opaque())
    found = [(s.span, s.name) for s in secrets.find(Source(text.encode(), "job.sh"))]
    assert [n for _, n in found] == [name]
    monkeypatch.setattr(secrets, "_NAME_HINT_BYTES", re.compile(b""))  # every expansion looked at
    assert [(s.span, s.name) for s in secrets.find(Source(text.encode(), "job.sh"))] == found


_TEXT_REGIONS = (
    "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --job-name=hf_token_check\n"
    "#SBATCH --comment={hf} # TOKEN={w}\n"
    "# export HF_TOKEN={hf}\n"
    "# nothing to see here\n"
    "# a key for later: wandb login {w}\n"
    "  # indented: MY_SECRET={w}\t\n"
    "cat > ~/.netrc <<EOF\nmachine hub password {hf}\nEOF\n"
    "cat > notes.txt <<EOF\njust notes\nEOF\n"
    "echo done  # old one: {gh}\n"
    "NAME= #TOKEN={w}\n"
    "SECRET= #TOKEN={w}\n"
    "python x.py --token #{gh} # HF_TOKEN={hf}\r\n"
    "echo ){hf} ) API_KEY={w} )\n"
    "if [ ; then\n  MY_API_KEY={w}\nfi ) # hub_token={gh}\n"
)


def test_text_of_a_stretch_bounded_by_lines_is_what_the_whole_file_gives_there():
    # a comment, here-document or unread region that starts and ends a line (but for spaces
    # and tabs) is not scanned on its own: the whole file's text scan gives what lies inside
    text = _TEXT_REGIONS.format(hf=HF, w=WANDB, gh=GH)
    for data in (
        text.encode(),
        text.replace("\n", "\r\n").encode(),
        text.encode() + b"# caf\xe9 TOKEN=" + WANDB.encode() + b"\n",  # not UTF-8: read as Latin-1
    ):
        source = Source(data, "job.sh")
        whole = redaction.whole_text_secrets(source)
        assert len(whole[0]) >= 8
        checked = 0
        for start in range(len(data) + 1):
            for end in range(start, len(data) + 1):
                if not redaction.line_bounded(data, start, end):
                    continue
                region = Span(start, end)
                assert redaction.within(whole, region, False, "comment") == list(
                    redaction.text_secrets(source, region, False, "comment")), (start, end)
                checked += 1
        assert checked > 500


@pytest.mark.parametrize("lone", [False, True])
def test_scanning_regions_from_the_whole_file_finds_what_scanning_each_finds(lone, monkeypatch):
    text = _TEXT_REGIONS.format(hf=HF, w=WANDB, gh=GH)
    if lone:  # the whole file's scan finds nothing (the value it reads there is no secret's)
        text = HEAD + "NAME= #TOKEN=%s\n  # x\n" % WANDB
    for data in (text.encode(), text.replace("\n", "\r\n").encode()):
        quick = [(s.span, s.site, s.live, s.name, s.value) for s in secrets.find(Source(data, "job.sh"))]
        if lone:
            assert not redaction.whole_text_secrets(Source(data, "job.sh"))[0] and len(quick) == 1
        else:
            assert {site for _span, site, _live, _name, _value in quick} >= {"comment", "text", "unparsed"}
            assert len(quick) >= 8
        with monkeypatch.context() as patched:  # every region scanned on its own
            source = Source(data, "job.sh")
            patched.setattr(secrets, "whole_text_secrets", lambda _source: ((None,), []))
            patched.setattr(secrets, "within", lambda _whole, region, live, site: list(
                redaction.text_secrets(source, region, live, site)))
            every = [(s.span, s.site, s.live, s.name, s.value) for s in secrets.find(source)]
        assert every == quick


def test_expansion_sites_read_once_give_the_findings_read_every_time(monkeypatch):
    from sbatchlint.rules import secrets as rules

    text = (
        "#!/bin/bash\n#SBATCH --nodes=2\nexport HF_TOKEN WANDB_API_KEY\n"
        'BASE="cd $HOME && python fetch.py --token $HF_TOKEN --key ${WANDB_API_KEY}"\n'
        'CMD="$BASE --out $HOME/out"\n'
        'srun bash -c "$CMD"\n'
        'srun bash -c "$BASE; echo $HOME"\n'
        'srun python train.py --token "$HF_TOKEN" --home "$HOME"\n'
        'echo "using $BASE"\n'
    )
    once = [(d.code, d.span, said(d)) for d in lint_text(text, ["SBL402", "SBL403"])]
    assert len(once) >= 4
    every = rules.batch_sites

    def fresh(script, value):
        script.__dict__.pop("_secret_expansion_sites", None)
        return every(script, value)

    monkeypatch.setattr(rules, "batch_sites", fresh)
    assert [(d.code, d.span, said(d)) for d in lint_text(text, ["SBL402", "SBL403"])] == once
