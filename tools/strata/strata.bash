# bash completion for strata. The commands and each command's options are
# asked of strata itself (`strata help --commands`, `strata help --options
# CMD`: the options its --help names), so they follow the binary that runs.
_strata() {
    local cur=${COMP_WORDS[COMP_CWORD]} prog=${COMP_WORDS[0]} words
    if [ "$COMP_CWORD" -eq 1 ]; then
        words="$("$prog" help --commands 2>/dev/null) help --help --version"
    elif [ "${COMP_WORDS[1]}" = help ]; then
        words="$("$prog" help --commands 2>/dev/null) --commands --options --man"
    elif [[ $cur == -* ]]; then
        words=$("$prog" help --options "${COMP_WORDS[1]}" 2>/dev/null)
    else
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return 0
    fi
    mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
}
complete -o filenames -F _strata strata
