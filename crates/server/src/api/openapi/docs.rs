//! The `/docs` reference page: one self-contained HTML document rendered from the OpenAPI document.
//!
//! Everything (style, script) is inline and the page references no external URL, so it works with no
//! internet. It lists every operation with its parameters (type, default, range, enum), responses and
//! schemas, and a small form per GET route that calls the API from the browser (same origin) with an
//! optional key.

use std::fmt::Write;

use serde_json::{Map, Value};

/// Renders the page from an OpenAPI 3.1 document.
pub fn render(doc: &Value) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let title = doc["info"]["title"].as_str().unwrap_or("API");
    let version = doc["info"]["version"].as_str().unwrap_or("");
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{t} reference</title><style>{STYLE}</style></head><body>",
        t = esc(title)
    );

    let ops = operations(doc);
    let tags = tag_list(doc, &ops);

    // Navigation.
    out.push_str("<nav><p class=\"brand\">");
    out.push_str(&esc(title));
    out.push_str("</p><ul>");
    out.push_str("<li><a href=\"#intro\">Introduction</a></li>");
    for (tag, _) in &tags {
        let _ = write!(out, "<li class=\"tag\">{}</li>", esc(tag));
        for op in ops.iter().filter(|o| &o.tag == tag) {
            let _ = write!(
                out,
                "<li><a href=\"#{id}\"><span class=\"m {ml}\">{m}</span> {p}</a></li>",
                id = esc(&op.anchor()),
                ml = op.method,
                m = op.method.to_uppercase(),
                p = esc(&op.path)
            );
        }
    }
    out.push_str("<li class=\"tag\">schemas</li><li><a href=\"#schemas\">All schemas</a></li></ul></nav><main>");

    // Introduction.
    let _ = write!(
        out,
        "<h1 id=\"intro\">{} <small>{}</small></h1>",
        esc(title),
        esc(version)
    );
    out.push_str(&markdown(doc["info"]["description"].as_str().unwrap_or("")));
    out.push_str(
        "<div class=\"key\"><label for=\"api-key\">API key for the forms below (optional; sent as \
<code>X-API-Key</code>, kept in this browser only):</label> <input id=\"api-key\" type=\"password\" \
autocomplete=\"off\" placeholder=\"cbk_...\"></div>",
    );

    // Operations by tag.
    for (tag, description) in &tags {
        let _ = write!(out, "<h2 id=\"tag-{t}\">{t}</h2>", t = esc(tag));
        if let Some(d) = description {
            out.push_str(&markdown(d));
        }
        for op in ops.iter().filter(|o| &o.tag == tag) {
            render_operation(&mut out, doc, op);
        }
    }

    // Schemas.
    out.push_str("<h2 id=\"schemas\">Schemas</h2>");
    if let Some(schemas) = doc["components"]["schemas"].as_object() {
        for (name, schema) in schemas {
            render_schema(&mut out, name, schema);
        }
    }
    out.push_str("</main><script>");
    out.push_str(SCRIPT);
    out.push_str("</script></body></html>\n");
    out
}

struct Op<'a> {
    method: &'static str,
    path: String,
    tag: String,
    op: &'a Value,
}

impl Op<'_> {
    fn anchor(&self) -> String {
        match self.op["operationId"].as_str() {
            Some(id) => format!("op-{id}"),
            None => format!("op-{}-{}", self.method, self.path.replace(['/', '{', '}'], "-")),
        }
    }
}

const METHODS: [&str; 8] = ["get", "post", "put", "patch", "delete", "head", "options", "trace"];

fn operations(doc: &Value) -> Vec<Op<'_>> {
    let mut ops = Vec::new();
    if let Some(paths) = doc["paths"].as_object() {
        for (path, item) in paths {
            for method in METHODS {
                if let Some(op) = item.get(method).filter(|o| o.is_object()) {
                    ops.push(Op {
                        method,
                        path: path.clone(),
                        tag: op["tags"][0].as_str().unwrap_or("other").to_string(),
                        op,
                    });
                }
            }
        }
    }
    ops
}

/// Tags in the document's order, then any tag only operations use.
fn tag_list(doc: &Value, ops: &[Op<'_>]) -> Vec<(String, Option<String>)> {
    let mut tags: Vec<(String, Option<String>)> = doc["tags"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| {
                    Some((
                        t["name"].as_str()?.to_string(),
                        t["description"].as_str().map(str::to_string),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    for op in ops {
        if !tags.iter().any(|(t, _)| t == &op.tag) {
            tags.push((op.tag.clone(), None));
        }
    }
    tags
}

fn render_operation(out: &mut String, doc: &Value, op: &Op<'_>) {
    let o = op.op;
    let _ = write!(
        out,
        "<section class=\"op\" id=\"{id}\"><h3><span class=\"m {ml}\">{m}</span> <code>{p}</code></h3>",
        id = esc(&op.anchor()),
        ml = op.method,
        m = op.method.to_uppercase(),
        p = esc(&op.path)
    );
    if let Some(s) = o["summary"].as_str() {
        let _ = write!(out, "<p class=\"summary\">{}</p>", esc(s));
    }
    if let Some(d) = o["description"].as_str() {
        out.push_str(&markdown(d));
    }
    if let Some(sec) = o["security"].as_array() {
        let optional = sec.iter().any(|s| s.as_object().is_some_and(Map::is_empty));
        let needs_key = sec.iter().any(|s| s.get("api_key").is_some());
        if needs_key {
            out.push_str(if optional {
                "<p class=\"auth\">API key: optional.</p>"
            } else {
                "<p class=\"auth\">API key: required.</p>"
            });
        }
    }

    // Parameters.
    let params: Vec<&Value> = o["parameters"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    if !params.is_empty() {
        out.push_str(
            "<h4>Parameters</h4><table><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Required</th>\
<th>Default</th><th>Allowed</th><th>Description</th></tr></thead><tbody>",
        );
        for p in &params {
            let schema = &p["schema"];
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(p["name"].as_str().unwrap_or("")),
                esc(p["in"].as_str().unwrap_or("")),
                type_label(schema),
                if p["required"].as_bool() == Some(true) {
                    "yes"
                } else {
                    "no"
                },
                default_label(schema),
                constraints(schema),
                inline_md(p["description"].as_str().unwrap_or("")),
            );
        }
        out.push_str("</tbody></table>");
    }

    // Responses.
    if let Some(responses) = o["responses"].as_object() {
        out.push_str(
            "<h4>Responses</h4><table><thead><tr><th>Status</th><th>Description</th><th>Body</th></tr></thead><tbody>",
        );
        for (status, r) in responses {
            let r = resolve(doc, r);
            let body = r["content"]
                .as_object()
                .and_then(|c| c.iter().next())
                .map(|(ct, media)| {
                    let schema = if media["schema"].is_null() {
                        String::new()
                    } else {
                        type_label(&media["schema"])
                    };
                    format!("<code>{}</code> {}", esc(ct), schema)
                })
                .unwrap_or_default();
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                esc(status),
                inline_md(r["description"].as_str().unwrap_or("")),
                body
            );
        }
        out.push_str("</tbody></table>");
    }

    // Try it (GET only).
    if op.method == "get" {
        let _ = write!(
            out,
            "<details class=\"try\"><summary>Try it</summary><form data-path=\"{}\">",
            esc(&op.path)
        );
        for p in &params {
            let name = p["name"].as_str().unwrap_or("");
            let placeholder = default_plain(&p["schema"]);
            let _ = write!(
                out,
                "<label><code>{n}</code>{req} <input name=\"{n}\" data-in=\"{i}\" placeholder=\"{ph}\"></label>",
                n = esc(name),
                i = esc(p["in"].as_str().unwrap_or("query")),
                req = if p["required"].as_bool() == Some(true) {
                    " *"
                } else {
                    ""
                },
                ph = esc(&placeholder)
            );
        }
        out.push_str("<button type=\"submit\">Send</button><pre class=\"out\"></pre></form></details>");
    }
    out.push_str("</section>");
}

fn render_schema(out: &mut String, name: &str, schema: &Value) {
    let _ = write!(
        out,
        "<section class=\"schema\" id=\"schema-{n}\"><h3>{n}</h3>",
        n = esc(name)
    );
    if let Some(d) = schema["description"].as_str() {
        out.push_str(&markdown(d));
    }
    if let Some(values) = schema["enum"].as_array() {
        let _ = write!(out, "<p>One of: {}</p>", enum_list(values));
    }
    if let Some(variants) = schema["oneOf"].as_array() {
        // Enums whose variants carry their own docs render as oneOf of single-value schemas.
        out.push_str("<ul>");
        for v in variants {
            let values = v["enum"]
                .as_array()
                .map(|a| enum_list(a))
                .unwrap_or_else(|| type_label(v));
            let d = v["description"].as_str().map(inline_md).unwrap_or_default();
            let _ = write!(out, "<li>{values} {d}</li>");
        }
        out.push_str("</ul>");
    }
    for part in schema["allOf"].as_array().into_iter().flatten() {
        if let Some(r) = part["$ref"].as_str() {
            let _ = write!(out, "<p>All fields of {}, plus:</p>", ref_link(r));
        } else {
            render_properties(out, part);
        }
    }
    render_properties(out, schema);
    out.push_str("</section>");
}

fn render_properties(out: &mut String, schema: &Value) {
    let Some(props) = schema["properties"].as_object() else {
        return;
    };
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push_str(
        "<table><thead><tr><th>Field</th><th>Type</th><th>Always present</th><th>Allowed</th><th>Description</th>\
</tr></thead><tbody>",
    );
    for (field, p) in props {
        let _ = write!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(field),
            type_label(p),
            if required.contains(&field.as_str()) {
                "yes"
            } else {
                "no"
            },
            constraints(p),
            inline_md(p["description"].as_str().unwrap_or(""))
        );
    }
    out.push_str("</tbody></table>");
}

/// Follows a local `$ref` once (for reusable responses).
fn resolve<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    match v["$ref"].as_str().and_then(|r| r.strip_prefix("#/")) {
        Some(pointer) => doc.pointer(&format!("/{pointer}")).unwrap_or(v),
        None => v,
    }
}

fn ref_link(r: &str) -> String {
    let name = r.rsplit('/').next().unwrap_or(r);
    format!("<a href=\"#schema-{n}\">{n}</a>", n = esc(name))
}

/// A short, linked description of a schema's type: `string (date-time) | null`, `array of MarketOut`, ...
fn type_label(s: &Value) -> String {
    if let Some(r) = s["$ref"].as_str() {
        return ref_link(r);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(alts) = s[key].as_array() {
            if alts.iter().all(|a| a["enum"].as_array().is_some_and(|e| e.len() == 1)) && !alts.is_empty() {
                return "string".to_string();
            }
            return alts.iter().map(type_label).collect::<Vec<_>>().join(" | ");
        }
    }
    if let Some(parts) = s["allOf"].as_array() {
        return parts.iter().map(type_label).collect::<Vec<_>>().join(" &amp; ");
    }
    let types: Vec<String> = match &s["type"] {
        Value::String(t) => vec![t.clone()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => Vec::new(),
    };
    if types.is_empty() {
        return if s.as_object().is_some_and(Map::is_empty) || s.is_null() {
            "any".to_string()
        } else {
            "object".to_string()
        };
    }
    types
        .iter()
        .map(|t| match t.as_str() {
            "array" => format!("array of {}", type_label(&s["items"])),
            "null" => "null".to_string(),
            other => match s["format"].as_str() {
                Some(f) => format!("{} ({})", esc(other), esc(f)),
                None => esc(other),
            },
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

fn enum_list(values: &[Value]) -> String {
    values
        .iter()
        .filter(|v| !v.is_null())
        .map(|v| format!("<code>{}</code>", esc(&plain(v))))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Ranges, lengths and enums of a schema, for the "Allowed" column.
fn constraints(s: &Value) -> String {
    let mut parts = Vec::new();
    let mut enums = Vec::new();
    collect_enums(s, &mut enums);
    if !enums.is_empty() {
        parts.push(enum_list(&enums));
    }
    match (s.get("minimum"), s.get("maximum")) {
        (Some(min), Some(max)) => parts.push(format!("{} to {}", plain(min), plain(max))),
        (Some(min), None) => parts.push(format!("&ge; {}", plain(min))),
        (None, Some(max)) => parts.push(format!("&le; {}", plain(max))),
        _ => {}
    }
    if let Some(step) = s.get("multipleOf") {
        parts.push(format!("in steps of {}", plain(step)));
    }
    // A time written as a number or as text: the number's bound (Unix milliseconds from 2001 on).
    for alt in s["anyOf"].as_array().into_iter().flatten() {
        if let (Some(t), Some(min)) = (alt["type"].as_str(), alt.get("minimum")) {
            parts.push(format!("{} &ge; {}", esc(t), plain(min)));
        }
    }
    if let Some(max) = s.get("maxLength") {
        parts.push(format!("at most {} characters", plain(max)));
    }
    parts.join("; ")
}

fn collect_enums(s: &Value, into: &mut Vec<Value>) {
    if let Some(values) = s["enum"].as_array() {
        into.extend(values.iter().filter(|v| !v.is_null()).cloned());
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        for alt in s[key].as_array().into_iter().flatten() {
            collect_enums(alt, into);
        }
    }
}

fn default_plain(s: &Value) -> String {
    s.get("default").map(plain).unwrap_or_default()
}

fn default_label(s: &Value) -> String {
    s.get("default")
        .map(|d| format!("<code>{}</code>", esc(&plain(d))))
        .unwrap_or_default()
}

/// A JSON value as text: strings without quotes.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// HTML-escapes text.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// Escapes, then renders `code` spans.
fn inline_md(s: &str) -> String {
    let escaped = esc(s);
    let mut o = String::with_capacity(escaped.len());
    for (i, part) in escaped.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(o, "<code>{part}</code>");
        } else {
            o.push_str(part);
        }
    }
    o
}

/// The small Markdown subset the descriptions use: `## ` headings, `|` tables, paragraphs, `code` spans.
fn markdown(s: &str) -> String {
    let mut out = String::new();
    let mut para: Vec<&str> = Vec::new();
    let mut table: Vec<&str> = Vec::new();
    let flush_para = |out: &mut String, para: &mut Vec<&str>| {
        if !para.is_empty() {
            let _ = write!(out, "<p>{}</p>", inline_md(&para.join(" ")));
            para.clear();
        }
    };
    let flush_table = |out: &mut String, table: &mut Vec<&str>| {
        if table.is_empty() {
            return;
        }
        out.push_str("<table>");
        for (i, row) in table.iter().enumerate() {
            let cells: Vec<&str> = row.trim().trim_matches('|').split('|').map(str::trim).collect();
            if cells
                .iter()
                .all(|c| !c.is_empty() && c.chars().all(|ch| ch == '-' || ch == ':'))
            {
                continue;
            }
            let tag = if i == 0 { "th" } else { "td" };
            out.push_str("<tr>");
            for c in cells {
                let _ = write!(out, "<{tag}>{}</{tag}>", inline_md(c));
            }
            out.push_str("</tr>");
        }
        out.push_str("</table>");
        table.clear();
    };
    for line in s.lines() {
        let t = line.trim();
        if t.starts_with('|') {
            flush_para(&mut out, &mut para);
            table.push(t);
            continue;
        }
        flush_table(&mut out, &mut table);
        if let Some(h) = t.strip_prefix("## ") {
            flush_para(&mut out, &mut para);
            let _ = write!(out, "<h3>{}</h3>", inline_md(h));
        } else if t.is_empty() {
            flush_para(&mut out, &mut para);
        } else {
            para.push(t);
        }
    }
    flush_table(&mut out, &mut table);
    flush_para(&mut out, &mut para);
    out
}

const STYLE: &str = r#"
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1d2330;background:#fff;display:flex}
nav{position:sticky;top:0;height:100vh;overflow:auto;width:300px;flex:none;background:#f4f6f9;border-right:1px solid #dde2ea;padding:12px 10px;font-size:13px}
nav ul{list-style:none;margin:0;padding:0}nav li a{display:block;padding:2px 4px;color:#1d2330;text-decoration:none;border-radius:4px;word-break:break-all}
nav li a:hover{background:#e3e8f0}nav .tag{margin-top:12px;font-weight:600;text-transform:uppercase;color:#5a6578;font-size:11px}
nav .brand{font-weight:700;font-size:15px;margin:0 4px 8px}
main{flex:1;min-width:0;padding:16px 32px 64px;max-width:1100px}h1 small{font-size:14px;color:#5a6578;font-weight:400}
h2{margin-top:40px;border-bottom:2px solid #dde2ea;text-transform:capitalize}
section.op,section.schema{border:1px solid #dde2ea;border-radius:8px;padding:4px 16px 12px;margin:16px 0}
h3 code{font-size:15px}h4{margin:12px 0 4px}
table{border-collapse:collapse;width:100%;font-size:13px;margin:6px 0}th,td{border:1px solid #dde2ea;padding:4px 6px;text-align:left;vertical-align:top}th{background:#f4f6f9}
code{font:12.5px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f1f3f7;padding:0 3px;border-radius:3px}
.m{display:inline-block;min-width:52px;text-align:center;font:700 11px ui-monospace,monospace;color:#fff;border-radius:4px;padding:2px 4px;background:#5a6578}
.m.get{background:#1a7f4b}.m.post{background:#1f5fbf}.m.put{background:#a86500}.m.delete{background:#b3261e}.m.patch{background:#6b3fa0}
.summary{font-weight:600}.alias,.auth{color:#5a6578;font-size:13px}
.key{margin:16px 0;padding:10px;background:#fff8e1;border:1px solid #f0d98a;border-radius:6px}.key input{width:320px}
details.try{margin-top:8px}details.try summary{cursor:pointer;font-weight:600;color:#1f5fbf}
form label{display:inline-block;margin:4px 12px 4px 0;font-size:13px}form input{font:13px ui-monospace,monospace;padding:2px 4px;width:160px}
button{margin:6px 0;padding:4px 14px;font-weight:600;cursor:pointer}
pre.out{background:#1d2330;color:#e6e9ef;padding:10px;border-radius:6px;max-height:420px;overflow:auto;font-size:12px;white-space:pre-wrap}
pre.out:empty{display:none}
"#;

const SCRIPT: &str = r#"
(function () {
  var key = document.getElementById('api-key');
  try { key.value = localStorage.getItem('crossbook-api-key') || ''; } catch (e) {}
  key.addEventListener('change', function () { try { localStorage.setItem('crossbook-api-key', key.value.trim()); } catch (e) {} });
  document.querySelectorAll('details.try form').forEach(function (form) {
    form.addEventListener('submit', function (ev) {
      ev.preventDefault();
      var path = form.getAttribute('data-path');
      var qs = new URLSearchParams();
      form.querySelectorAll('input[data-in]').forEach(function (input) {
        if (input.value === '') return;
        if (input.getAttribute('data-in') === 'path') {
          path = path.replace('{' + input.name + '}', encodeURIComponent(input.value));
        } else {
          qs.append(input.name, input.value);
        }
      });
      var url = path + (qs.toString() ? '?' + qs.toString() : '');
      var out = form.querySelector('pre.out');
      var headers = {};
      if (key.value.trim()) headers['X-API-Key'] = key.value.trim();
      out.textContent = 'GET ' + url + ' ...';
      fetch(url, { headers: headers }).then(function (r) {
        return r.text().then(function (text) {
          var body = text;
          try { body = JSON.stringify(JSON.parse(text), null, 2); } catch (e) {}
          var meta = ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'Retry-After']
            .filter(function (h) { return r.headers.get(h) !== null; })
            .map(function (h) { return h + ': ' + r.headers.get(h); }).join('\n');
          out.textContent = 'GET ' + url + '\n' + r.status + ' ' + r.statusText + '\n' + meta + '\n\n' + body;
        });
      }).catch(function (err) { out.textContent = 'GET ' + url + '\n' + err; });
    });
  });
})();
"#;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn escapes_and_renders_code() {
        assert_eq!(esc("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
        assert_eq!(inline_md("use `q` <here>"), "use <code>q</code> &lt;here&gt;");
    }

    #[test]
    fn type_labels() {
        assert_eq!(
            type_label(&json!({"type": ["string", "null"], "format": "date-time"})),
            "string (date-time) | null"
        );
        assert_eq!(
            type_label(&json!({"type": "array", "items": {"$ref": "#/components/schemas/MarketOut"}})),
            "array of <a href=\"#schema-MarketOut\">MarketOut</a>"
        );
        assert_eq!(
            type_label(&json!({"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/X"}]})),
            "null | <a href=\"#schema-X\">X</a>"
        );
        assert_eq!(
            constraints(&json!({"type": "integer", "minimum": 1, "maximum": 100})),
            "1 to 100"
        );
        assert_eq!(
            constraints(&json!({"oneOf": [{"type": "null"}, {"type": "string", "enum": ["a", "b"]}]})),
            "<code>a</code>, <code>b</code>"
        );
    }

    #[test]
    fn markdown_tables_and_headings() {
        let html = markdown("## Title\n\nSome `x` text\ncontinued.\n\n| a | b |\n|---|---|\n| 1 | `2` |\n");
        assert_eq!(
            html,
            "<h3>Title</h3><p>Some <code>x</code> text continued.</p><table><tr><th>a</th><th>b</th></tr>\
<tr><td>1</td><td><code>2</code></td></tr></table>"
        );
    }
}
