#include "unit_started.hpp"

#include <cstdio>
#include <gpuprov/strings.hpp>
#include <string>

namespace gpuprov::steps {

using namespace std::chrono_literals;

std::optional<std::chrono::system_clock::time_point> parse_systemd_us_utc(std::string_view text) {
    // "<weekday> YYYY-MM-DD HH:MM:SS.uuuuuu UTC"; the weekday is redundant and not checked.
    const auto space = text.find(' ');
    if (space == std::string_view::npos) {
        return std::nullopt;
    }
    const std::string rest(text.substr(space + 1));
    int y = 0;
    unsigned mo = 0;
    unsigned d = 0;
    int h = 0;
    int mi = 0;
    int s = 0;
    long us = 0;
    char zone[8] = {};
    int used = 0;
    if (std::sscanf(rest.c_str(), "%4d-%2u-%2u %2d:%2d:%2d.%6ld %7s%n", &y, &mo, &d, &h, &mi, &s,
                    &us, zone, &used) != 8 ||
        static_cast<std::size_t>(used) != rest.size() || std::string_view(zone) != "UTC") {
        return std::nullopt;
    }
    const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{mo},
                                          std::chrono::day{d}};
    if (!ymd.ok() || h > 23 || mi > 59 || s > 60 || us < 0) {
        return std::nullopt;
    }
    return std::chrono::sys_days{ymd} + std::chrono::hours{h} + std::chrono::minutes{mi} +
           std::chrono::seconds{s} + std::chrono::microseconds{us};
}

std::optional<std::chrono::system_clock::time_point> unit_active_since(const System& sys,
                                                                       std::string_view unit) {
    const auto r =
        sys.query({.argv = {"systemctl", "show", "-p", "ActiveState", "-p", "ActiveEnterTimestamp",
                            "--timestamp=us+utc", std::string(unit)},
                   .timeout = 30s});
    if (!r.ok()) {
        return std::nullopt;
    }
    bool active = false;
    std::optional<std::chrono::system_clock::time_point> since;
    for (const auto& line : lines(r.out)) {
        if (line == "ActiveState=active") {
            active = true;
        } else if (starts_with(line, "ActiveEnterTimestamp=")) {
            since =
                parse_systemd_us_utc(line.substr(std::string_view("ActiveEnterTimestamp=").size()));
        }
    }
    return active ? since : std::nullopt;
}

} // namespace gpuprov::steps
