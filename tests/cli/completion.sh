#!/usr/bin/env bash
# The generated completions work (issue 20 item 4): bash's is sourced with stand-ins for the
# bash-completion helpers it calls and asked what a user's TAB would offer; zsh's must parse.
# Usage: completion.sh BUILD_DIR/gpuprov
set -uo pipefail
bin=$1
. "$(dirname "$0")/lib.sh"

"$bin" completion bash >$scratch/gpuprov.bash || bad "completion bash failed"
"$bin" completion zsh >$scratch/_gpuprov || bad "completion zsh failed"
bash -n $scratch/gpuprov.bash && ok || bad "bash completion does not parse"
if command -v zsh >/dev/null; then
    zsh -n $scratch/_gpuprov && ok || bad "zsh completion does not parse"
fi
[[ "$("$bin" completion steps | paste -sd,)" == "$("$bin" plan cv-train --only nvidia 2>&1 | grep -o 'step ids are: .*' | sed 's/step ids are: //; s/[ )]//g')" ]] \
    && ok || bad "completion steps is not the list plan names"

# complete WORD...: what bash offers for the last word (bash-completion's helpers stood in for:
# _init_completion sets cur/prev/words/cword, _filedir offers FILE/DIR markers).
complete_words() {
    bash -c '
        compopt() { :; }
        _init_completion() { words=("${WORDS[@]}"); cword=$((${#WORDS[@]} - 1)); cur=${WORDS[cword]}; prev=${WORDS[cword - 1]}; }
        _filedir() { COMPREPLY+=("<files${1:+ $1}>"); }
        complete() { :; }
        source "$1"; shift
        WORDS=("$@")
        _gpuprov
        printf "%s\n" "${COMPREPLY[@]}" | LC_ALL=C sort | paste -sd" "
    ' _ $scratch/gpuprov.bash "$@"
}
expect_completion() { # expect_completion WANT WORD...
    local want=$1 got
    shift
    got=$(complete_words "$@")
    [[ "$got" == "$want" ]] && ok || bad "complete '$*': got '$got', wanted '$want'"
}
expect_completion "plan profiles" gpuprov p
expect_completion "--log-file --log-level" gpuprov --log-
expect_completion "plan" gpuprov --log-level debug pl
expect_completion "debug" gpuprov --log-level deb
expect_completion "--only" gpuprov plan cv-train --on
expect_completion "cuda-repo cuda-toolkit cudnn" gpuprov plan cv-train --only cu
expect_completion "driver,cuda-repo driver,cuda-toolkit driver,cudnn" gpuprov apply x --skip driver,cu
expect_completion "if-needed" gpuprov apply cv-train --reboot if
expect_completion "--temperature-alert --temperature-alert-c" gpuprov doctor --temperature-a
expect_completion "--sha256" gpuprov cloud-init cv-train --sh
expect_completion "<files>" gpuprov verify cv-train --junit ""
expect_completion "<files -d>" gpuprov metrics --textfile ""
expect_completion "<files y?(a)ml> cv-train" gpuprov plan cv
expect_completion "show" gpuprov profiles sh
expect_completion "<files y?(a)ml> nlp-infer" gpuprov profiles show nl
expect_completion "bash" gpuprov completion ba

echo "$pass passed, $fail failed"
[[ $fail == 0 ]]
