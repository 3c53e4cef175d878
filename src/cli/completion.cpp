// `gpuprov completion`: bash and zsh completion generated from the CLI definition itself, so the
// completions cannot lag behind a flag, a step or a built-in profile (dist/completion/ holds the
// output; tests/cli/cli_reference.sh fails when it is stale).
#include "cli_common.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gpuprov/builtin_names.hpp>
#include <gpuprov/step.hpp>
#include <iostream>
#include <map>
#include <sstream>

namespace gpuprov::cli {

namespace {

std::map<const CLI::Option*, std::vector<std::string>>& value_lists() {
    static std::map<const CLI::Option*, std::vector<std::string>> lists;
    return lists;
}

/// One option as a completion sees it.
struct OptionSpec {
    std::vector<std::string> names; ///< "--yes", "-y"
    std::string help;
    std::string value; ///< type name; empty for a flag
    std::vector<std::string> choices;
};

/// A command (or `profiles show`) as a completion sees it.
struct CommandSpec {
    std::string name;
    std::string help;
    std::vector<OptionSpec> options;
    std::string positional; ///< the first positional's type name; empty if none
    std::vector<std::string> positional_choices;
    std::vector<CommandSpec> subcommands; ///< `profiles list|show|validate`
};

std::vector<OptionSpec> options_of(const CLI::App& app) {
    std::vector<OptionSpec> out;
    for (const auto* opt : app.get_options()) {
        if (opt->get_positional() || (opt->get_lnames().empty() && opt->get_snames().empty())) {
            continue;
        }
        OptionSpec spec;
        for (const auto& l : opt->get_lnames()) {
            spec.names.push_back("--" + l);
        }
        for (const auto& s : opt->get_snames()) {
            spec.names.push_back("-" + s);
        }
        spec.help = opt->get_description();
        if (opt->get_type_size() != 0) {
            spec.value = opt->get_type_name();
        }
        spec.choices = accepted_values(opt);
        out.push_back(std::move(spec));
    }
    return out;
}

CommandSpec spec_of(const CLI::App& app) {
    CommandSpec spec{app.get_name(), app.get_description(), options_of(app), {}, {}, {}};
    for (const auto* opt : app.get_options()) {
        if (opt->get_positional() && opt->get_lnames().empty() && opt->get_snames().empty()) {
            spec.positional = opt->get_type_name();
            spec.positional_choices = accepted_values(opt);
            break;
        }
    }
    for (const auto* sub : app.get_subcommands({})) {
        spec.subcommands.push_back(spec_of(*sub));
    }
    return spec;
}

std::string words(const std::vector<std::string>& v) {
    return fmt::format("{}", fmt::join(v, " "));
}

// --- bash ---------------------------------------------------------------------------------------

/// A bash statement that completes the value of kind `value` / `choices` and returns.
std::string bash_value(const std::string& value, const std::vector<std::string>& choices) {
    if (!choices.empty()) {
        return fmt::format("COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return", words(choices));
    }
    if (value == kStepsValue) {
        return "_gpuprov_steps; return";
    }
    if (value == kProfileValue) {
        return "_gpuprov_profile; return";
    }
    if (value == kFileValue) {
        return "_filedir; return";
    }
    if (value == kDirValue) {
        return "_filedir -d; return";
    }
    return "return"; // free text: a number, a URL, a digest
}

void bash_value_cases(std::ostream& out, const std::vector<OptionSpec>& options,
                      const std::string& indent) {
    for (const auto& o : options) {
        if (!o.value.empty()) {
            out << indent
                << fmt::format("{}) {} ;;\n", fmt::join(o.names, " | "),
                               bash_value(o.value, o.choices));
        }
    }
}

std::vector<std::string> all_names(const std::vector<OptionSpec>& options) {
    std::vector<std::string> out;
    for (const auto& o : options) {
        out.insert(out.end(), o.names.begin(), o.names.end());
    }
    return out;
}

std::vector<std::string> value_names(const std::vector<CommandSpec>& cmds,
                                     const std::vector<OptionSpec>& globals) {
    std::vector<std::string> out;
    auto add = [&out](const std::vector<OptionSpec>& options) {
        for (const auto& o : options) {
            if (!o.value.empty()) {
                for (const auto& n : o.names) {
                    if (std::find(out.begin(), out.end(), n) == out.end()) {
                        out.push_back(n);
                    }
                }
            }
        }
    };
    add(globals);
    for (const auto& c : cmds) {
        add(c.options);
        for (const auto& s : c.subcommands) {
            add(s.options);
        }
    }
    return out;
}

/// The completion of one command's own words: its value options, then its subcommands or its
/// options and positional.
void bash_command(std::ostream& out, const CommandSpec& c, const std::string& indent) {
    out << indent << "case \"$prev\" in\n";
    bash_value_cases(out, c.options, indent + "    ");
    out << indent << "esac\n";
    out << indent << "if [[ \"$cur\" == -* ]]; then\n"
        << indent
        << fmt::format("    COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return\n",
                       words(all_names(c.options)))
        << indent << "fi\n";
    if (!c.positional.empty()) {
        out << indent << bash_value(c.positional, c.positional_choices) << "\n";
    }
}

std::string bash_script(const CommandSpec& app) {
    std::ostringstream out;
    std::vector<std::string> commands;
    for (const auto& c : app.subcommands) {
        commands.push_back(c.name);
    }
    out << "# bash completion for gpuprov                                   -*- shell-script -*-\n"
        << "# Generated by `gpuprov completion bash` from the CLI definition; do not edit.\n"
        << "_gpuprov_steps() {\n"
        << "    # comma-separated step ids: complete the word after the last comma\n"
        << "    local done=${cur%,*} last=${cur##*,}\n"
        << "    [[ \"$done\" == \"$cur\" ]] && done=\"\" || done=\"$done,\"\n"
        << fmt::format("    COMPREPLY=($(compgen -P \"$done\" -W \"{}\" -- \"$last\"))\n",
                       words(step_ids()))
        << "    compopt -o nospace 2>/dev/null\n"
        << "}\n"
        << "_gpuprov_profile() {\n"
        << fmt::format("    COMPREPLY=($(compgen -W \"{}\" -- \"$cur\"))\n",
                       words(builtin_profile_names()))
        << "    _filedir 'y?(a)ml'\n"
        << "}\n"
        << "_gpuprov() {\n"
        << "    local cur prev words cword\n"
        << "    _init_completion || return\n\n"
        << "    # the command and its subcommand: the first words that are neither options nor "
           "values\n"
        << "    local i cmd=\"\" sub=\"\"\n"
        << "    for ((i = 1; i < cword; i++)); do\n"
        << "        case \"${words[i]}\" in\n"
        << fmt::format("        {}) ((i++)) ;;\n",
                       fmt::join(value_names(app.subcommands, app.options), " | "))
        << "        -*) ;;\n"
        << "        *) if [[ -z \"$cmd\" ]]; then cmd=${words[i]}; elif [[ -z \"$sub\" ]]; then "
           "sub=${words[i]}; fi ;;\n"
        << "        esac\n"
        << "    done\n\n"
        << "    case \"$prev\" in\n";
    bash_value_cases(out, app.options, "    ");
    out << "    esac\n"
        << "    case \"$cmd\" in\n"
        << fmt::format("    \"\") COMPREPLY=($(compgen -W \"{} {}\" -- \"$cur\")) ;;\n",
                       words(commands), words(all_names(app.options)));
    for (const auto& c : app.subcommands) {
        out << fmt::format("    {})\n", c.name);
        if (c.subcommands.empty()) {
            bash_command(out, c, "        ");
        } else {
            std::vector<std::string> subs;
            for (const auto& s : c.subcommands) {
                subs.push_back(s.name);
            }
            out << "        case \"$sub\" in\n"
                << fmt::format("        \"\") COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")) ;;\n",
                               words(subs));
            for (const auto& s : c.subcommands) {
                out << fmt::format("        {})\n", s.name);
                bash_command(out, s, "            ");
                out << "            ;;\n";
            }
            out << "        esac\n";
        }
        out << "        ;;\n";
    }
    out << "    esac\n"
        << "} &&\n"
        << "    complete -F _gpuprov gpuprov\n";
    return out.str();
}

// --- zsh ----------------------------------------------------------------------------------------

std::string zsh_quote(std::string s) {
    std::string out;
    for (const char c : s) {
        if (c == '\'') {
            out += "'\\''";
        } else if (c == '[' || c == ']' || c == ':') {
            out += '\\';
            out += c;
        } else {
            out += c;
        }
    }
    return out;
}

std::string zsh_action(const std::string& value, const std::vector<std::string>& choices) {
    if (!choices.empty()) {
        return fmt::format("({})", words(choices));
    }
    if (value == kStepsValue) {
        return "_gpuprov_steps";
    }
    if (value == kProfileValue) {
        return "_gpuprov_profile";
    }
    if (value == kFileValue) {
        return "_files";
    }
    if (value == kDirValue) {
        return "_directories";
    }
    return " ";
}

std::string zsh_specs(const CommandSpec& c) {
    std::vector<std::string> specs;
    for (const auto& o : c.options) {
        const auto help = zsh_quote(o.help.substr(0, o.help.find(';')));
        const std::string value = o.value.empty() ? ""
                                                  : fmt::format(":{}:{}", zsh_quote(o.value),
                                                                zsh_action(o.value, o.choices));
        if (o.names.size() == 1) {
            specs.push_back(fmt::format("'{}[{}]{}'", o.names[0], help, value));
        } else {
            specs.push_back(fmt::format("'({0})'{{{1}}}'[{2}]{3}'", words(o.names),
                                        fmt::join(o.names, ","), help, value));
        }
    }
    if (!c.positional.empty()) {
        specs.push_back(fmt::format("'*:{}:{}'", zsh_quote(c.positional),
                                    zsh_action(c.positional, c.positional_choices)));
    }
    return fmt::format("{}", fmt::join(specs, " "));
}

std::string zsh_script(const CommandSpec& app) {
    std::ostringstream out;
    out << "#compdef gpuprov\n"
        << "# zsh completion for gpuprov. Generated by `gpuprov completion zsh` from the CLI "
           "definition; do not edit.\n\n"
        << "_gpuprov_profile() { _alternatives 'builtin:built-in profile:("
        << words(builtin_profile_names()) << ")' 'file:profile file:_files -g \"*.y(a|)ml\"'; }\n"
        << "_gpuprov_steps() { _values -s , 'step id' " << words(step_ids()) << "; }\n\n";
    std::vector<std::string> commands;
    for (const auto& c : app.subcommands) {
        commands.push_back(fmt::format("{}\\:\"{}\"", c.name, zsh_quote(c.help)));
    }
    out << "_arguments -C " << zsh_specs(app) << " \\\n"
        << fmt::format("    '1:command:(({}))' \\\n", fmt::join(commands, " "))
        << "    '*::arg:->args'\n\n"
        << "case $state in\n"
        << "args)\n"
        << "    case $words[1] in\n";
    for (const auto& c : app.subcommands) {
        if (c.subcommands.empty()) {
            out << fmt::format("    {}) _arguments {} ;;\n", c.name, zsh_specs(c));
            continue;
        }
        std::vector<std::string> subs;
        for (const auto& s : c.subcommands) {
            subs.push_back(s.name);
        }
        out << fmt::format("    {})\n", c.name)
            << fmt::format("        if (( CURRENT == 2 )); then _values 'action' {}; return; fi\n",
                           words(subs))
            << "        case $words[2] in\n";
        for (const auto& s : c.subcommands) {
            out << fmt::format("        {}) shift words; (( CURRENT-- )); _arguments {} ;;\n",
                               s.name, zsh_specs(s));
        }
        out << "        esac ;;\n";
    }
    out << "    esac ;;\n"
        << "esac\n";
    return out.str();
}

} // namespace

CLI::Option* accept_only(CLI::Option* opt, std::vector<std::string> values) {
    opt->check(CLI::IsMember(values));
    value_lists()[opt] = std::move(values);
    return opt;
}

const std::vector<std::string>& accepted_values(const CLI::Option* opt) {
    static const std::vector<std::string> any;
    const auto it = value_lists().find(opt);
    return it == value_lists().end() ? any : it->second;
}

void add_completion_command(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "completion", "print shell completion for bash or zsh, or the step ids (one per line)");
    static std::string what;
    accept_only(cmd->add_option("WHAT", what, "bash, zsh or steps")->required(),
                {"bash", "zsh", "steps"});
    cmd->callback([&app] {
        if (what == "steps") {
            for (const auto& id : step_ids()) {
                std::cout << id << "\n";
            }
            return;
        }
        const auto spec = spec_of(app);
        std::cout << (what == "bash" ? bash_script(spec) : zsh_script(spec));
    });
}

} // namespace gpuprov::cli
