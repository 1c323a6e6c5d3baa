#include "reports/format_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fusebench::reports {

std::string format(const char* printf_format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, printf_format, v);
    return buf;
}

std::string format_us(double us) {
    if (!std::isfinite(us)) return "-";
    const double a = std::abs(us);
    if (a >= 1000) return format("%.0f", us);
    if (a >= 100) return format("%.1f", us);
    if (a >= 10) return format("%.2f", us);
    return format("%.3f", us);
}

std::string format_pct_change(double ratio) {
    const double pct = (ratio - 1.0) * 100.0;
    // "-0.0%" reads as a change: a rounding that lands on zero prints unsigned.
    if (std::abs(pct) < 0.05) return "0.0%";
    return format("%+.1f%%", pct);
}

std::string format_pct(double pct) {
    if (!std::isfinite(pct)) return "?%";
    return std::abs(pct) >= 1 || pct == 0 ? format("%.1f%%", pct) : format("%.2g%%", pct);
}

std::string format_optional(const std::optional<double>& v, const char* printf_format, const std::string& missing) {
    return v ? format(printf_format, *v) : missing;
}

namespace {

// Terminal columns of a UTF-8 string: one per code point (the tables use only narrow symbols: ± ·).
std::size_t display_width(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

}  // namespace

std::string aligned_table(const std::vector<std::string>& header, const text_rows& rows) {
    std::vector<std::size_t> w(header.size(), 0);
    auto widen = [&](const std::vector<std::string>& r) {
        for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], display_width(r[i]));
    };
    widen(header);
    for (const auto& r : rows) widen(r);
    auto line = [&](const std::vector<std::string>& r) {
        std::string s;
        for (std::size_t i = 0; i < w.size(); ++i) {
            const std::string& cell = i < r.size() ? r[i] : std::string();
            s += cell;
            if (i + 1 < w.size()) s += std::string(w[i] - display_width(cell) + 2, ' ');
        }
        while (!s.empty() && s.back() == ' ') s.pop_back();
        return s + "\n";
    };
    std::string out = line(header);
    std::vector<std::string> rule;
    for (std::size_t x : w) rule.push_back(std::string(x, '-'));
    out += line(rule);
    for (const auto& r : rows) out += line(r);
    return out;
}

std::string markdown_escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '|') o += "\\|";
        else if (c == '\n' || c == '\r') o += ' ';
        else o += c;
    }
    return o;
}

std::string markdown_table(const std::vector<std::string>& header, const text_rows& rows) {
    auto line = [](const std::vector<std::string>& r) {
        std::string s = "|";
        for (const auto& c : r) {
            s += ' ';
            s += markdown_escape(c);
            s += " |";
        }
        return s + "\n";
    };
    std::string out = line(header);
    out += "|";
    for (std::size_t i = 0; i < header.size(); ++i) out += "---|";
    out += "\n";
    for (const auto& r : rows) out += line(r);
    return out;
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string o = "\"";
    for (char c : s) {
        if (c == '"') o += "\"\"";
        else o += c;
    }
    return o + "\"";
}

std::string xml_escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        switch (c) {
            case '&': o += "&amp;"; break;
            case '<': o += "&lt;"; break;
            case '>': o += "&gt;"; break;
            case '"': o += "&quot;"; break;
            case '\'': o += "&apos;"; break;
            default:
                // XML 1.0 allows no control characters but tab, newline and carriage return.
                if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') o += ' ';
                else o += c;
        }
    }
    return o;
}

}  // namespace fusebench::reports
