"""The executor options (--workers, --scheduler, --connect-timeout) are declared and validated once
(verification.options.add_executor): every command that has them refuses the same bad value with the
same words, in one line, exit status 2, before anything is opened."""
import pytest

from verification.cli import main

COMMANDS = ("stress", "san")


def refusal(capfd, tmp_path, command, *extra):
    argv = [command] + (["dobrushin.factor"] if command == "stress" else []) + \
        ["--db", str(tmp_path / "r.db"), "--out", str(tmp_path / "out"), *extra]
    assert main(argv) == 2
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert not (tmp_path / "r.db").exists() and not (tmp_path / "out").exists()
    return err[0].replace(f"attnbounds {command}", "attnbounds CMD")


@pytest.mark.parametrize("extra", [("--connect-timeout", "9999"), ("--connect-timeout", "0"),
                                   ("--connect-timeout", "nan"), ("--scheduler", "http://x:1"),
                                   ("--workers", "0"), ("--workers", "2", "--scheduler", "tcp://127.0.0.1:1")])
def test_every_command_refuses_a_bad_executor_option_in_the_same_words(capfd, tmp_path, extra):
    lines = {c: refusal(capfd, tmp_path, c, *extra) for c in COMMANDS}
    assert len(set(lines.values())) == 1, lines
    assert extra[0] in lines["stress"] or "--workers" in lines["stress"]


def test_the_timeout_message_states_the_range(capfd, tmp_path):
    line = refusal(capfd, tmp_path, "san", "--connect-timeout", "9999")
    assert "in (0, 600]" in line and "'9999'" in line
