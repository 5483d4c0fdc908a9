"""Shell completion scripts for bash, zsh and fish, generated from the argparse parser itself.

The scripts are static: they complete commands, subcommands, flags and fixed choices, and fall back to file
names. They carry tables keyed by the command path ("", "alias", "alias set", ...) and one small walker that
finds the path in the words typed so far (skipping flags and the values of flags that take one), so a new
command or flag appears in every shell's completion without touching this module.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

SHELLS = ("bash", "zsh", "fish")
PROG = "arca"


@dataclass
class Node:
    """One command path: its subcommands (with their help), flags, and the flags that take a value."""

    commands: dict[str, str] = field(default_factory=dict)
    flags: dict[str, str] = field(default_factory=dict)
    valued: list[str] = field(default_factory=list)
    choices: list[str] = field(default_factory=list)  # fixed values of a positional, e.g. the shells


def command_tree(parser: argparse.ArgumentParser) -> dict[str, Node]:
    """Every command path of `parser`, "" being the root, mapped to what may follow it."""
    tree: dict[str, Node] = {}

    def walk(path: str, current: argparse.ArgumentParser) -> None:
        node = tree.setdefault(path, Node())
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
                for name, sub in action.choices.items():
                    if name not in helps:  # a hidden command: an old spelling kept working, never offered
                        continue
                    node.commands[name] = helps[name]
                    walk(f"{path} {name}".strip(), sub)
            elif action.option_strings:
                if action.help == argparse.SUPPRESS:
                    continue
                for flag in action.option_strings:
                    node.flags[flag] = action.help or ""
                    if action.nargs != 0:
                        node.valued.append(flag)
            elif action.choices and action.help != argparse.SUPPRESS:
                node.choices += [str(choice) for choice in action.choices]

    walk("", parser)
    return tree


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    tree = command_tree(parser)
    if shell == "bash":
        return _bash(tree)
    if shell == "zsh":
        return _zsh(tree)
    if shell == "fish":
        return _fish(tree)
    raise ValueError(f"no completion for {shell!r}: one of {', '.join(SHELLS)}")


def _words(values: list[str] | dict[str, str]) -> str:
    return " ".join(values)


def _case(function: str, tree: dict[str, Node], pick: str) -> str:
    """A POSIX-style function printing, for the command path in $1, the words of one table."""
    lines = [f"{function}() {{", '    case "$1" in']
    for path, node in tree.items():
        words = _words(getattr(node, pick))
        if words:
            lines.append(f'        "{path}") printf "%s\\n" "{words}" ;;')
    lines += ["    esac", "}"]
    return "\n".join(lines)


_WALK = """\
    local cmdpath="" word skip=0 i
    for ((i = {first}; i < {cursor}; i++)); do
        word=${{{words}[i]}}
        if ((skip)); then
            skip=0
            continue
        fi
        case $word in
            --*=*) ;;
            -*) [[ " $(_arca_valued "$cmdpath") " == *" $word "* ]] && skip=1 ;;
            *) [[ " $(_arca_commands "$cmdpath") " == *" $word "* ]] && cmdpath=${{cmdpath:+$cmdpath }}$word ;;
        esac
    done"""


def _tables(tree: dict[str, Node]) -> str:
    return "\n\n".join(
        _case(name, tree, pick)
        for name, pick in (
            ("_arca_commands", "commands"),
            ("_arca_flags", "flags"),
            ("_arca_valued", "valued"),
            ("_arca_choices", "choices"),
        )
    )


def _bash(tree: dict[str, Node]) -> str:
    walk = _WALK.format(first=1, cursor="COMP_CWORD", words="COMP_WORDS")
    return f"""\
# bash completion for {PROG}: eval "$({PROG} completion bash)" (e.g. in ~/.bashrc)

{_tables(tree)}

_arca() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}}
{walk}
    COMPREPLY=()
    if ((skip)); then
        return  # the value of a flag: file names (complete -o default)
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_arca_flags "$cmdpath")" -- "$cur"))
    else
        COMPREPLY=($(compgen -W "$(_arca_commands "$cmdpath") $(_arca_choices "$cmdpath")" -- "$cur"))
    fi
}}

complete -o default -F _arca {PROG}
"""


def _zsh(tree: dict[str, Node]) -> str:
    walk = _WALK.format(first=2, cursor="CURRENT", words="words")
    return f"""\
#compdef {PROG}
# zsh completion for {PROG}: save as _{PROG} in a directory of $fpath, or eval "$({PROG} completion zsh)"

{_tables(tree)}

_arca() {{
{walk}
    if ((skip)); then
        _files
        return
    fi
    local -a candidates
    if [[ ${{words[CURRENT]}} == -* ]]; then
        candidates=(${{=$(_arca_flags "$cmdpath")}})
    else
        candidates=(${{=$(_arca_commands "$cmdpath")}} ${{=$(_arca_choices "$cmdpath")}})
    fi
    if ((${{#candidates}})); then
        compadd -- $candidates
    else
        _files
    fi
}}

if [[ $funcstack[1] == _arca ]]; then
    _arca "$@"
else
    compdef _arca {PROG}
fi
"""


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish(tree: dict[str, Node]) -> str:
    def table(function: str, pick: str) -> str:
        lines = [f"function {function}", "    switch $argv[1]"]
        for path, node in tree.items():
            words = list(getattr(node, pick))
            if words:
                lines += [f"        case {_fish_quote(path)}", f"            printf '%s\\n' {_words(words)}"]
        lines += ["    end", "end"]
        return "\n".join(lines)

    completions = []
    for path, node in tree.items():
        condition = f"-n \"__arca_at '{path}'\""  # paths are command words: letters, digits, '-' and spaces
        no_files = " -f" if node.commands else ""
        for name, help_text in node.commands.items():
            completions.append(f"complete -c {PROG}{no_files} {condition} -a {name} -d {_fish_quote(help_text)}")
        for choice in node.choices:
            completions.append(f"complete -c {PROG} -f {condition} -a {_fish_quote(choice)}")
        for flag, help_text in node.flags.items():
            spec = f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1:]}"
            takes = " -r" if flag in node.valued else ""
            completions.append(f"complete -c {PROG} {condition} {spec}{takes} -d {_fish_quote(help_text)}")
    return f"""\
# fish completion for {PROG}: {PROG} completion fish > ~/.config/fish/completions/{PROG}.fish

{table("__arca_commands", "commands")}

{table("__arca_valued", "valued")}

# The command path typed so far ("", "alias", "alias set", ...): command words, minus flags and their values.
function __arca_path
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l cmdpath
    set -l skip 0
    for token in $tokens
        if test $skip = 1
            set skip 0
            continue
        end
        switch $token
            case '--*=*'
            case '-*'
                if contains -- $token (__arca_valued "$cmdpath")
                    set skip 1
                end
            case '*'
                if contains -- $token (__arca_commands "$cmdpath")
                    set -a cmdpath $token
                end
        end
    end
    echo "$cmdpath"
end

function __arca_at
    set -l typed (__arca_path)
    test "$typed" = "$argv[1]"
end

complete -c {PROG} -e
{chr(10).join(completions)}
"""
