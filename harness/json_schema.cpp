#include "harness/json_schema.hpp"

#include <fstream>
#include <set>
#include <stdexcept>

namespace fusebench {

namespace {

const std::set<std::string> supported{"$schema", "$id", "$defs", "$ref", "title", "description", "type",
                                      "properties", "required", "additionalProperties", "items", "enum",
                                      "const", "minimum", "maximum", "minItems", "anyOf", "examples"};

bool has_type(const nlohmann::json& v, const std::string& t) {
    if (t == "null") return v.is_null();
    if (t == "boolean") return v.is_boolean();
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "integer") return v.is_number_integer() || (v.is_number_float() && v.get<double>() == static_cast<double>(static_cast<long long>(v.get<double>())));
    if (t == "number") return v.is_number();
    return false;
}

std::string join_path(const std::string& base, const std::string& key) { return base + "/" + key; }

}  // namespace

json_schema::json_schema(nlohmann::json schema) : m_schema(std::move(schema)) { check_keywords(m_schema, "#"); }

void json_schema::check_keywords(const nlohmann::json& s, const std::string& where) const {
    if (s.is_boolean()) return;
    if (!s.is_object()) throw std::invalid_argument("schema at " + where + " is not an object");
    for (const auto& [k, v] : s.items()) {
        if (!supported.count(k)) throw std::invalid_argument("unsupported schema keyword '" + k + "' at " + where);
        if (k == "properties" || k == "$defs") {
            for (const auto& [pk, pv] : v.items()) check_keywords(pv, where + "/" + k + "/" + pk);
        } else if (k == "items" || (k == "additionalProperties" && v.is_object())) {
            check_keywords(v, where + "/" + k);
        } else if (k == "anyOf") {
            for (std::size_t i = 0; i < v.size(); ++i) check_keywords(v[i], where + "/anyOf/" + std::to_string(i));
        }
    }
}

void json_schema::validate_at(const nlohmann::json& s, const nlohmann::json& v, const std::string& path,
                              std::vector<std::string>& errors) const {
    if (s.is_boolean()) {
        if (!s.get<bool>()) errors.push_back(path + ": not allowed here");
        return;
    }
    if (s.contains("$ref")) {
        const std::string ref = s["$ref"];
        const std::string prefix = "#/$defs/";
        if (ref.rfind(prefix, 0) != 0 || !m_schema.contains("$defs") || !m_schema["$defs"].contains(ref.substr(prefix.size()))) {
            errors.push_back(path + ": unresolvable $ref " + ref);
            return;
        }
        validate_at(m_schema["$defs"][ref.substr(prefix.size())], v, path, errors);
    }
    if (s.contains("type")) {
        bool ok = false;
        std::string names;
        if (s["type"].is_array()) {
            for (const auto& t : s["type"]) {
                ok = ok || has_type(v, t.get<std::string>());
                names += (names.empty() ? "" : "|") + t.get<std::string>();
            }
        } else {
            ok = has_type(v, s["type"].get<std::string>());
            names = s["type"].get<std::string>();
        }
        if (!ok) {
            errors.push_back(path + ": expected " + names + ", got " + v.type_name());
            return;
        }
    }
    if (s.contains("enum")) {
        bool found = false;
        for (const auto& e : s["enum"]) found = found || e == v;
        if (!found) errors.push_back(path + ": " + v.dump() + " is not one of " + s["enum"].dump());
    }
    if (s.contains("const") && s["const"] != v) errors.push_back(path + ": expected " + s["const"].dump());
    if (v.is_number()) {
        if (s.contains("minimum") && v.get<double>() < s["minimum"].get<double>()) errors.push_back(path + ": below minimum " + s["minimum"].dump());
        if (s.contains("maximum") && v.get<double>() > s["maximum"].get<double>()) errors.push_back(path + ": above maximum " + s["maximum"].dump());
    }
    if (v.is_object()) {
        if (s.contains("required")) {
            for (const auto& r : s["required"]) {
                if (!v.contains(r.get<std::string>())) errors.push_back(path + ": missing required '" + r.get<std::string>() + "'");
            }
        }
        for (const auto& [k, item] : v.items()) {
            if (s.contains("properties") && s["properties"].contains(k)) {
                validate_at(s["properties"][k], item, join_path(path, k), errors);
            } else if (s.contains("additionalProperties")) {
                validate_at(s["additionalProperties"], item, join_path(path, k), errors);
            }
        }
    }
    if (v.is_array()) {
        if (s.contains("minItems") && v.size() < s["minItems"].get<std::size_t>()) errors.push_back(path + ": fewer than " + s["minItems"].dump() + " items");
        if (s.contains("items")) {
            for (std::size_t i = 0; i < v.size(); ++i) validate_at(s["items"], v[i], join_path(path, std::to_string(i)), errors);
        }
    }
    if (s.contains("anyOf")) {
        bool any = false;
        for (const auto& alt : s["anyOf"]) {
            std::vector<std::string> e;
            validate_at(alt, v, path, e);
            if (e.empty()) {
                any = true;
                break;
            }
        }
        if (!any) errors.push_back(path + ": matches none of the anyOf alternatives");
    }
}

std::vector<std::string> json_schema::validate(const nlohmann::json& instance) const {
    std::vector<std::string> errors;
    validate_at(m_schema, instance, "", errors);
    return errors;
}

json_schema load_json_schema(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read schema " + path);
    try {
        return json_schema(nlohmann::json::parse(in));
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error("schema " + path + " is not valid JSON: " + e.what());
    }
}

}  // namespace fusebench
