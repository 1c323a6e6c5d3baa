#include "harness/shapes.hpp"

#include "harness/runner.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <limits>

namespace fusebench {

namespace {

std::string trim(const std::string& s) {
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : sep) + x;
    return out;
}

std::string names_of(const shape_support& sh) {
    std::vector<std::string> a, o;
    for (const auto& x : sh.axes) a.push_back(x.name);
    for (const auto& x : sh.options) o.push_back(x.name);
    return "dimensions: " + join(a) + (o.empty() ? "" : "; options: " + join(o));
}

std::vector<std::string> shape_suites(const registry& reg) {
    std::vector<std::string> out;
    for (const auto& s : reg.suites())
        if (s.shapes) out.push_back(s.name);
    return out;
}

}  // namespace

user_shape parse_user_shape(const registry& reg, const std::vector<const suite*>& candidates, const std::string& text) {
    const std::string where = "--shape '" + text + "': ";
    std::string body = trim(text);
    const suite* s = nullptr;
    const std::size_t colon = body.find(':');
    if (colon != std::string::npos) {
        const std::string name = trim(body.substr(0, colon));
        s = reg.find(name);
        if (s == nullptr) throw usage_error(where + "unknown suite '" + name + "' (suites that take shapes: " + join(shape_suites(reg)) + ")");
        if (std::find(candidates.begin(), candidates.end(), s) == candidates.end()) {
            throw usage_error(where + "suite '" + name + "' is not among the selected suites (--suite)");
        }
        body = trim(body.substr(colon + 1));
    } else {
        std::vector<const suite*> with;
        for (const suite* c : candidates)
            if (c->shapes) with.push_back(c);
        if (with.size() != 1) {
            throw usage_error(where + "name the suite, as SUITE: name=value,... (suites that take shapes: " +
                              join(shape_suites(reg)) + ")");
        }
        s = with.front();
    }
    if (!s->shapes) throw usage_error(where + "suite '" + s->name + "' does not take shapes from the command line");
    const shape_support& sh = *s->shapes;

    user_shape u;
    u.suite = s->name;
    u.text = text;
    if (body.empty()) throw usage_error(where + "no dimensions given (" + names_of(sh) + ")");
    std::size_t start = 0;
    while (start <= body.size()) {
        const std::size_t comma = body.find(',', start);
        const std::string item = trim(body.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        start = comma == std::string::npos ? body.size() + 1 : comma + 1;
        if (item.empty()) throw usage_error(where + "empty item (expected name=value)");
        const std::size_t eq = item.find('=');
        if (eq == std::string::npos) throw usage_error(where + "'" + item + "' is not name=value");
        const std::string key = trim(item.substr(0, eq)), val = trim(item.substr(eq + 1));
        if (u.dims.count(key) || u.options.count(key)) throw usage_error(where + "'" + key + "' is given twice");
        const auto axis = std::find_if(sh.axes.begin(), sh.axes.end(), [&](const shape_axis& a) { return a.name == key; });
        const auto option = std::find_if(sh.options.begin(), sh.options.end(), [&](const shape_option& o) { return o.name == key; });
        if (axis != sh.axes.end()) {
            std::int64_t v = 0;
            const char* b = val.data();
            const char* e = val.data() + val.size();
            const bool negative = !val.empty() && val[0] == '-';
            const auto r = std::from_chars(b + (negative ? 1 : 0), e, v);
            if (val.empty() || r.ptr != e || (r.ec != std::errc() && r.ec != std::errc::result_out_of_range)) {
                throw usage_error(where + key + " must be a whole number, got '" + val + "'");
            }
            if (r.ec == std::errc::result_out_of_range) throw usage_error(where + key + " = " + val + " overflows a 64-bit integer");
            if (negative && v != 0) throw usage_error(where + key + " must be positive, got " + val);
            if (v < axis->min || v > axis->max) {
                throw usage_error(where + key + " must be in [" + std::to_string(axis->min) + ", " + std::to_string(axis->max) +
                                  "], got " + val);
            }
            u.dims[key] = v;
        } else if (option != sh.options.end()) {
            if (std::find(option->values.begin(), option->values.end(), val) == option->values.end()) {
                throw usage_error(where + key + " must be one of " + join(option->values) + ", got '" + val + "'");
            }
            u.options[key] = val;
        } else {
            throw usage_error(where + "suite '" + s->name + "' has no dimension or option '" + key + "' (" + names_of(sh) + ")");
        }
    }
    for (const auto& a : sh.axes) {
        if (u.dims.count(a.name)) continue;
        if (a.fallback) u.dims[a.name] = *a.fallback;
        else if (a.derived.empty()) throw usage_error(where + "missing " + a.name + " (" + a.description + ")");
    }
    for (const auto& o : sh.options)
        if (!u.options.count(o.name)) u.options[o.name] = o.values.front();
    // Element counts of the tensors are products of the axes: refuse shapes whose product
    // overflows before any size is computed from it.
    long double product = 1;
    for (const auto& [k, v] : u.dims) product *= static_cast<long double>(v);
    if (product > static_cast<long double>(std::int64_t{1} << 62)) {
        throw usage_error(where + "the product of the dimensions exceeds 2^62: sizes computed from them could overflow");
    }
    if (sh.check) {
        if (auto why = sh.check(u)) throw usage_error(where + *why);
    }
    return u;
}

std::vector<std::string> read_shapes_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw usage_error("--shapes: cannot read '" + path + "'");
    std::vector<std::string> out;
    std::string line;
    while (std::getline(in, line)) {
        const std::size_t hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        line = trim(line);
        if (!line.empty()) out.push_back(line);
    }
    if (in.bad()) throw usage_error("--shapes: error reading '" + path + "'");
    if (out.empty()) throw usage_error("--shapes: '" + path + "' holds no shape");
    return out;
}

std::vector<std::string> describe_shape_support(const shape_support& s) {
    std::vector<std::string> out;
    for (const auto& a : s.axes) {
        std::string d = a.name + " (" + std::to_string(a.min) + ".." + std::to_string(a.max) + ", ";
        if (a.fallback) d += "default " + std::to_string(*a.fallback);
        else if (!a.derived.empty()) d += "default: " + a.derived;
        else d += "required";
        out.push_back(d + "): " + a.description);
    }
    for (const auto& o : s.options) out.push_back(o.name + " (" + join(o.values, " | ") + ", default " + o.values.front() + "): " + o.description);
    std::vector<std::string> dt, def;
    for (auto t : s.dtypes) dt.emplace_back(dtype_name(t));
    for (auto t : s.default_dtypes) def.emplace_back(dtype_name(t));
    out.push_back("dtypes " + join(dt) + " (default " + join(def) + ")");
    return out;
}

}  // namespace fusebench
