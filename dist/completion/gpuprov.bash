# bash completion for gpuprov                                   -*- shell-script -*-
_gpuprov() {
    local cur prev words cword
    _init_completion || return

    local commands="plan apply verify doctor facts status metrics cloud-init k8s-manifests profiles"
    local steps="preflight nouveau cuda-repo driver fabric-manager cuda-toolkit cudnn nccl tensorrt infiniband container-toolkit tuning monitoring verify"
    local builtins="cv-train nlp-infer sci-sim"
    local globals="--log-level --log-file --no-color --root --version --help"

    case "$prev" in
        --log-level) COMPREPLY=($(compgen -W "trace debug info warn error critical off" -- "$cur")); return ;;
        --log-file | --junit | --root | --textfile) _filedir; return ;;
        --reboot) COMPREPLY=($(compgen -W "never if-needed" -- "$cur")); return ;;
        --only | --skip)
            # comma-separated step ids: complete the word after the last comma
            local done=${cur%,*} last=${cur##*,}
            [[ "$done" == "$cur" ]] && done="" || done="$done,"
            COMPREPLY=($(compgen -P "$done" -W "$steps" -- "$last"))
            compopt -o nospace 2>/dev/null
            return ;;
        --profile) COMPREPLY=($(compgen -W "$builtins" -- "$cur")); _filedir 'y?(a)ml'; return ;;
    esac

    # the command: the first word that is neither a global option nor its value
    local i cmd=""
    for ((i = 1; i < cword; i++)); do
        case "${words[i]}" in
            --log-level | --log-file | --root) ((i++)) ;;
            -*) ;;
            *) cmd=${words[i]}; break ;;
        esac
    done

    if [[ -z "$cmd" ]]; then
        COMPREPLY=($(compgen -W "$commands $globals" -- "$cur"))
        return
    fi
    local opts=""
    case "$cmd" in
        plan) opts="--json --detailed-exitcode --only --skip --allow-remove" ;;
        apply) opts="--yes --dry-run --only --skip --reboot --json --allow-remove --allow-untrusted" ;;
        verify) opts="--json --junit --only --skip --smoke" ;;
        doctor) opts="--json --profile --temperature-alert" ;;
        facts | status) opts="--json" ;;
        metrics) opts="--textfile" ;;
        cloud-init) opts="--install-from" ;;
        k8s-manifests)
            if [[ "${words[cword - 1]}" == --output ]]; then _filedir; return; fi
            opts="--output" ;;
        profiles)
            if [[ "${words[cword - 1]}" == profiles ]]; then
                COMPREPLY=($(compgen -W "list show validate" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "$builtins" -- "$cur")); _filedir 'y?(a)ml'
            fi
            return ;;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
    else
        case "$cmd" in
            plan | apply | verify | cloud-init | k8s-manifests)
                COMPREPLY=($(compgen -W "$builtins" -- "$cur")); _filedir 'y?(a)ml' ;;
        esac
    fi
} &&
    complete -F _gpuprov gpuprov
