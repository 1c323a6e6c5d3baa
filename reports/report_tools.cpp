#include "reports/report_tools.hpp"

#include "harness/cli.hpp"

#include "harness/report.hpp"
#include "reports/compare_output.hpp"
#include "reports/gate.hpp"
#include "reports/merge.hpp"
#include "reports/perf_table.hpp"
#include "reports/report_file.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

namespace fusebench::reports {

namespace {

namespace fs = std::filesystem;

constexpr int exit_ok = 0;
constexpr int exit_regression = 1;
constexpr int exit_bad_input = 2;
constexpr int exit_write_failed = 4;

// A failure to write an output: exit 4, not 2 (the input was fine).
class write_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct parsed_args {
    std::vector<std::string> positional;
    std::map<std::string, std::string> values;
    std::set<std::string> flags;
};

parsed_args parse_args(int argc, char** argv, const std::set<std::string>& valued, const std::set<std::string>& flags) {
    parsed_args a;
    for (int i = 2; i < argc; ++i) {
        const std::string s = argv[i];
        if (s.size() > 1 && s[0] == '-' && s != "-") {
            if (valued.count(s)) {
                if (i + 1 >= argc) throw bad_input(s + " needs a value");
                if (!a.values.emplace(s, argv[++i]).second) throw bad_input(s + " given twice");
            } else if (flags.count(s)) {
                a.flags.insert(s);
            } else {
                throw bad_input("unknown option '" + s + "' (try `fusebench help`)");
            }
        } else {
            a.positional.push_back(s);
        }
    }
    return a;
}

bool same_file(const std::string& a, const std::string& b) {
    std::error_code ec;
    if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
    return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

// An output may never replace an input.
void refuse_overwriting_inputs(const std::string& out, const std::vector<std::string>& inputs) {
    for (const auto& in : inputs) {
        if (same_file(out, in)) throw bad_input("output " + out + " is the input " + in + ": refusing to overwrite it");
    }
}

// Temporary file in the target's folder, then rename: a reader never sees half a file.
void write_text_atomic(const std::string& path, const std::string& text) {
    const fs::path target(path);
    std::error_code ec;
    if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
    const fs::path tmp = target.string() + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw write_error("cannot write " + tmp.string());
        out << text;
        out.flush();
        if (!out) throw write_error("writing " + tmp.string() + " failed");
    }
    fs::rename(tmp, target, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw write_error("cannot rename " + tmp.string() + " to " + path);
    }
}

void write_json(const std::string& path, const nlohmann::json& j) {
    try {
        write_json_atomic(path, j);
    } catch (const std::exception& e) {
        throw write_error(e.what());
    }
}

namespace {
// --suite, --case, --dtype and --variant of compare and table, as run selects work.
result_selection selection_of(const parsed_args& a) {
    result_selection sel;
    const auto list = [&](const char* opt, std::vector<std::string>& to) {
        if (auto it = a.values.find(opt); it != a.values.end()) to = split_commas(it->second);
    };
    list("--suite", sel.suites);
    list("--case", sel.cases);
    list("--dtype", sel.dtypes);
    list("--variant", sel.variants);
    return sel;
}
}  // namespace

int cmd_compare(int argc, char** argv) {
    const auto a = parse_args(argc, argv,
                              {"--policy", "--threshold", "--markdown", "--json", "--junit", "--suite", "--case", "--dtype", "--variant"},
                              {"--all"});
    if (a.positional.size() != 2) throw bad_input("expected BASE.json NEW.json, got " + std::to_string(a.positional.size()) + " file(s)");
    const std::string& base_path = a.positional[0];
    const std::string& new_path = a.positional[1];

    policy pol;
    if (auto it = a.values.find("--policy"); it != a.values.end()) {
        pol = load_policy(it->second);
    } else if (const std::string def = default_policy_path(); !def.empty()) {
        pol = load_policy(def);
    }
    if (auto it = a.values.find("--threshold"); it != a.values.end()) {
        char* end = nullptr;
        const double t = std::strtod(it->second.c_str(), &end);
        if (end == it->second.c_str() || *end != '\0' || !(t >= 0 && t < 10)) {
            throw bad_input("--threshold expects a fraction in [0, 10) (0.05 = 5%), got '" + it->second + "'");
        }
        pol.threshold = t;
        pol.source += " with --threshold " + it->second;
    }
    for (const char* o : {"--markdown", "--json", "--junit"}) {
        if (auto it = a.values.find(o); it != a.values.end()) refuse_overwriting_inputs(it->second, {base_path, new_path});
    }
    const result_selection sel = selection_of(a);
    loaded_report base = load_report(base_path);
    loaded_report now = load_report(new_path);
    const std::size_t base_total = base.results().size(), new_total = now.results().size();
    if (!sel.empty()) {
        base = select_results(base, sel);
        now = select_results(now, sel);
    }
    comparison c = compare_reports(base, now, pol);
    c.selection = sel;
    c.base_selected = base.results().size();
    c.base_total = base_total;
    c.new_selected = now.results().size();
    c.new_total = new_total;

    std::fputs(format_compare_terminal(c, a.flags.count("--all") > 0).c_str(), stdout);
    if (auto it = a.values.find("--markdown"); it != a.values.end()) write_text_atomic(it->second, format_compare_markdown(c));
    if (auto it = a.values.find("--json"); it != a.values.end()) write_json(it->second, compare_to_json(c, pol));
    if (auto it = a.values.find("--junit"); it != a.values.end()) write_text_atomic(it->second, format_compare_junit(c, pol));
    return c.exit_code == 0 ? exit_ok : exit_regression;
}

int cmd_table(int argc, char** argv) {
    const auto a = parse_args(argc, argv, {"--labels", "--suite", "--case", "--dtype", "--variant", "--markdown", "--csv"}, {});
    if (a.positional.empty()) throw bad_input("expected at least one REPORT.json");
    std::vector<std::string> labels;
    if (auto it = a.values.find("--labels"); it != a.values.end()) {
        labels = split_commas(it->second);
        if (labels.size() != a.positional.size()) {
            throw bad_input("--labels has " + std::to_string(labels.size()) + " label(s) for " +
                            std::to_string(a.positional.size()) + " report(s)");
        }
    }
    const result_selection filter = selection_of(a);
    if (auto it = a.values.find("--markdown"); it != a.values.end()) refuse_overwriting_inputs(it->second, a.positional);

    std::vector<loaded_report> reports;
    reports.reserve(a.positional.size());
    for (const auto& p : a.positional) reports.push_back(load_report(p));
    const auto sources = table_sources(reports, labels);
    const auto tables = build_tables(sources, filter);
    if (tables.empty()) throw bad_input("no timed or failed result matches the selection");
    const std::string md = tables_markdown(tables, sources);
    std::fputs(md.c_str(), stdout);
    if (auto it = a.values.find("--markdown"); it != a.values.end()) write_text_atomic(it->second, md);
    if (auto it = a.values.find("--csv"); it != a.values.end()) {
        const auto files = tables_csv(tables, sources);
        for (const auto& [name, text] : files) {
            const std::string path = (fs::path(it->second) / name).string();
            refuse_overwriting_inputs(path, a.positional);
        }
        for (const auto& [name, text] : files) write_text_atomic((fs::path(it->second) / name).string(), text);
    }
    return exit_ok;
}

int cmd_merge(int argc, char** argv) {
    const auto a = parse_args(argc, argv, {}, {"--force", "--overwrite"});
    if (a.positional.size() < 2) throw bad_input("expected OUT.json IN.json [IN.json ...]");
    const std::string out = a.positional[0];
    const std::vector<std::string> ins(a.positional.begin() + 1, a.positional.end());
    refuse_overwriting_inputs(out, ins);
    std::error_code ec;
    if (fs::exists(out, ec) && !a.flags.count("--overwrite")) {
        throw bad_input("" + out + " exists (the first argument is the output; --overwrite replaces it)");
    }
    std::set<std::string> distinct;
    for (const auto& p : ins) {
        for (const auto& q : distinct) {
            if (same_file(p, q)) throw bad_input("" + p + " is given twice");
        }
        distinct.insert(p);
    }
    std::vector<loaded_report> reports;
    reports.reserve(ins.size());
    for (const auto& p : ins) reports.push_back(load_report(p));
    std::vector<std::string> notes;
    const nlohmann::json merged = merge_reports(reports, {a.flags.count("--force") > 0}, notes);
    // The merged report must be a valid report itself; a failure here is the merge's own bug.
    try {
        (void)parse_report(merged, out);
    } catch (const bad_input& e) {
        throw std::runtime_error(std::string("the merged report is invalid: ") + e.what());
    }
    write_json(out, merged);
    for (const auto& n : notes) std::fprintf(stderr, "fusebench merge: %s\n", n.c_str());
    const auto& s = merged["summary"];
    std::printf("merged %zu reports (%zu results, %s) into %s: %lld passed, %lld failed, %lld errors, %lld skipped\n", reports.size(),
                merged["results"].size(),
                merged.contains("devices") ? (std::to_string(merged["devices"].size()) + " devices").c_str() : "one device",
                out.c_str(), s["pass"].get<long long>(), s["fail"].get<long long>(), s["error"].get<long long>(),
                s["skipped"].get<long long>());
    return exit_ok;
}

}  // namespace

bool is_report_command(const std::string& command) { return command == "compare" || command == "table" || command == "merge"; }

int run_report_command(int argc, char** argv) {
    if (argc < 2 || !is_report_command(argv[1])) {
        std::fprintf(stderr, "fusebench: not a report command\n");
        return exit_bad_input;
    }
    const std::string cmd = argv[1];
    try {
        if (cmd == "compare") return cmd_compare(argc, argv);
        if (cmd == "table") return cmd_table(argc, argv);
        return cmd_merge(argc, argv);
    } catch (const bad_input& e) {
        std::fprintf(stderr, "fusebench %s: %s\n", cmd.c_str(), e.what());
        return exit_bad_input;
    } catch (const write_error& e) {
        std::fprintf(stderr, "fusebench %s: %s\n", cmd.c_str(), e.what());
        return exit_write_failed;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fusebench %s: internal error: %s\n", cmd.c_str(), e.what());
        return exit_write_failed;
    }
}

}  // namespace fusebench::reports
