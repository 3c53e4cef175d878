#include <fmt/format.h>
#include <gpuprov/diff.hpp>
#include <gpuprov/strings.hpp>
#include <vector>

namespace gpuprov {

namespace {

enum class Op { keep, del, add };
struct Edit {
    Op op;
    std::string line;
};

// Managed files are small (a few dozen lines), so the quadratic LCS table is fine here.
std::vector<Edit> edit_script(const std::vector<std::string>& a,
                              const std::vector<std::string>& b) {
    const auto n = a.size();
    const auto m = b.size();
    std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
    for (std::size_t i = n; i-- > 0;) {
        for (std::size_t j = m; j-- > 0;) {
            lcs[i][j] =
                a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
        }
    }
    std::vector<Edit> out;
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a[i] == b[j]) {
            out.push_back({Op::keep, a[i++]});
            ++j;
        } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
            // Deletions first, the way diff(1) prints a replaced line.
            out.push_back({Op::del, a[i++]});
        } else {
            out.push_back({Op::add, b[j++]});
        }
    }
    return out;
}

} // namespace

std::string unified_diff(std::string_view path, const std::optional<std::string>& before,
                         std::string_view after) {
    if (before && *before == after) {
        return {};
    }
    const auto a = before ? lines(*before) : std::vector<std::string>{};
    const auto b = lines(after);
    const auto edits = edit_script(a, b);
    std::string out =
        fmt::format("--- {}\n+++ {}\n", before ? "a" + std::string(path) : "/dev/null",
                    "b" + std::string(path));
    constexpr std::size_t context = 3;
    std::size_t k = 0;
    while (k < edits.size()) {
        if (edits[k].op == Op::keep) {
            ++k;
            continue;
        }
        // A hunk: from `context` lines before this change to `context` after the last change
        // that is within 2*context of the next.
        std::size_t start = k >= context ? k - context : 0;
        std::size_t end = k;
        std::size_t quiet = 0;
        for (std::size_t t = k; t < edits.size(); ++t) {
            if (edits[t].op != Op::keep) {
                end = t;
                quiet = 0;
            } else if (++quiet > 2 * context) {
                break;
            }
        }
        end = std::min(edits.size() - 1, end + context);
        std::size_t a_line = 1;
        std::size_t b_line = 1;
        for (std::size_t t = 0; t < start; ++t) {
            a_line += edits[t].op != Op::add ? 1 : 0;
            b_line += edits[t].op != Op::del ? 1 : 0;
        }
        std::size_t a_count = 0;
        std::size_t b_count = 0;
        std::string body;
        for (std::size_t t = start; t <= end; ++t) {
            const char mark = edits[t].op == Op::keep ? ' ' : (edits[t].op == Op::del ? '-' : '+');
            a_count += edits[t].op != Op::add ? 1 : 0;
            b_count += edits[t].op != Op::del ? 1 : 0;
            body += mark + edits[t].line + "\n";
        }
        out += fmt::format("@@ -{},{} +{},{} @@\n", a_count == 0 ? a_line - 1 : a_line, a_count,
                           b_count == 0 ? b_line - 1 : b_line, b_count);
        out += body;
        k = end + 1;
    }
    return out;
}

} // namespace gpuprov
