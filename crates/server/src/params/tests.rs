//! The rules of every kind of parameter.

use crossbook_core::{Amount, Timestamp};
use serde_json::json;
use utoipa::PartialSchema;

use super::*;
use crate::error::ApiError;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Color {
    Red,
    Blue,
}
impl ParamEnum for Color {
    const VALUES: &'static [(&'static str, Self)] = &[("red", Color::Red), ("blue", Color::Blue)];
}

fn q(s: &str) -> QueryMap {
    QueryMap::parse(s).unwrap()
}

fn err(r: ApiResult<impl std::fmt::Debug>) -> (Option<String>, String) {
    match r.unwrap_err() {
        ApiError::InvalidParameter { param, detail } | ApiError::MissingParameter { param, detail } => (param, detail),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn decodes_and_rejects_repeats() {
    let m = q("q=btc+up%2Fdown&x=1");
    assert_eq!(m.raw("q"), Some("btc up/down"));
    let (p, d) = err(QueryMap::parse("limit=1&limit=2"));
    assert_eq!(p.as_deref(), Some("limit"));
    assert_eq!(d, "limit must be given at most once");
}

#[test]
fn limit_and_offset_are_strict() {
    type L = Limit<30, 100>;
    let limit = |m: QueryMap| m.get::<L>("limit").map(L::get);
    assert_eq!(limit(q("")).unwrap(), 30);
    assert_eq!(limit(q("limit=1")).unwrap(), 1);
    assert_eq!(limit(q("limit=100")).unwrap(), 100);
    for bad in [
        "limit=0",
        "limit=101",
        "limit=",
        "limit=-1",
        "limit=1.5",
        "limit=abc",
        "limit=%2010",
        "limit=99999999999999999999",
    ] {
        let (p, d) = err(limit(q(bad)));
        assert_eq!(p.as_deref(), Some("limit"), "{bad}");
        assert_eq!(d, "limit must be an integer from 1 to 100", "{bad}");
    }
    let offset = |m: QueryMap| m.get::<Offset>("offset").map(Offset::get);
    assert_eq!(offset(q("")).unwrap(), 0);
    assert_eq!(offset(q("offset=1000000")).unwrap(), 1_000_000);
    for bad in ["offset=-1", "offset=1000001", "offset="] {
        let (_, d) = err(offset(q(bad)));
        assert_eq!(d, "offset must be an integer from 0 to 1000000", "{bad}");
    }
}

#[test]
fn amounts_are_exact_and_non_negative() {
    let m = q("a=1000&b=2.5&c=0.000001&d=-1&e=1e3&f=&g=0.1234567&h=+1");
    assert_eq!(m.non_negative_amount("a").unwrap(), Some(Amount::from_units(1000)));
    assert_eq!(
        m.non_negative_amount("b").unwrap(),
        Some(Amount::from_micros(2_500_000))
    );
    assert_eq!(m.non_negative_amount("c").unwrap(), Some(Amount::from_micros(1)));
    assert_eq!(m.non_negative_amount("e").unwrap(), Some(Amount::from_units(1000)));
    for bad in ["d", "f", "g", "h"] {
        let (p, _) = err(m.non_negative_amount(bad));
        assert_eq!(p.as_deref(), Some(bad));
    }
    assert_eq!(m.non_negative_amount("absent").unwrap(), None);
}

/// The exponent form reads as the plain form, exactly; a value too fine or not whole is still refused.
#[test]
fn exponents_read_as_the_plain_form() {
    for (written, plain) in [
        ("1e3", "1000"),
        ("1E3", "1000"),
        ("1e+3", "1000"),
        ("2.5E-1", "0.25"),
        ("25e-3", "0.025"),
        ("1.5e1", "15"),
        (".5e1", "5"),
        ("0.000001e6", "1"),
        ("123.456e2", "12345.6"),
        ("1e0", "1"),
        ("1000", "1000"),
        ("2.5", "2.5"),
    ] {
        assert_eq!(plain_number(written).as_deref(), Some(plain), "{written}");
        // `+` in a query string is a space: a client sends it as `%2B`.
        let exact = q(&format!("a={}", written.replace('+', "%2B")))
            .non_negative_amount("a")
            .unwrap();
        assert_eq!(
            exact,
            q(&format!("a={plain}")).non_negative_amount("a").unwrap(),
            "{written}"
        );
    }
    for bad in [
        "",
        "e3",
        "1e",
        "1e-",
        "-1e3",
        "1e3.5",
        "1.2.3e1",
        " 1e3",
        "1e3 ",
        "0x10",
        "1e99999999999",
        "inf",
        "NaN",
    ] {
        assert_eq!(plain_number(bad), None, "{bad:?}");
    }
    // More than 6 decimals once written out: refused as the plain form is.
    let (p, _) = err(q("a=1e-7").non_negative_amount("a"));
    assert_eq!(p.as_deref(), Some("a"));
    assert!(q("a=0.0000001").non_negative_amount("a").is_err());
    // Integers: any whole value, written either way.
    let limit = |m: QueryMap| m.get::<Limit<30, 100>>("limit").map(|l| l.get());
    for (written, n) in [("1e2", 100), ("1.5e1", 15), ("5E1", 50), ("15.0", 15), ("100", 100)] {
        assert_eq!(limit(q(&format!("limit={written}"))).unwrap(), n, "{written}");
    }
    for bad in ["1e3", "1.5", "2.5e0", "1e-1", "1e99999999999"] {
        assert!(limit(q(&format!("limit={bad}"))).is_err(), "{bad}");
    }
    // Cents keep any precision (rounded up), and milliseconds read the exponent form too.
    assert_eq!(
        q("c=2.5e-1").cents_ceil("c").unwrap(),
        q("c=0.25").cents_ceil("c").unwrap()
    );
    assert_eq!(
        q("t=1.7637525e12").instant("t").unwrap(),
        Some(Timestamp::from_millis(1_763_752_500_000))
    );
    assert!(q("t=1.5e0").instant("t").is_err());
}

#[test]
fn timestamps_and_booleans() {
    let m = q("a=2026-11-21&b=2026-11-21T19:15:00%2B02:00&c=yesterday&d=&e=1763752500000&f=-5");
    assert_eq!(m.timestamp("a").unwrap().unwrap().to_iso(), "2026-11-21T00:00:00.000Z");
    assert_eq!(m.timestamp("b").unwrap().unwrap().to_iso(), "2026-11-21T17:15:00.000Z");
    assert_eq!(err(m.timestamp("c")).0.as_deref(), Some("c"));
    assert_eq!(err(m.timestamp("d")).0.as_deref(), Some("d"));
    assert_eq!(m.instant("e").unwrap(), Some(Timestamp::from_millis(1_763_752_500_000)));
    assert_eq!(err(m.instant("f")).0.as_deref(), Some("f"));
    assert_eq!(m.instant("a").unwrap(), m.timestamp("a").unwrap());
    // Unix seconds are refused, naming the milliseconds they would be.
    let m = q("s=1763752500&t=978307200000&u=978307199999");
    let (param, detail) = err(m.instant("s"));
    assert_eq!(param.as_deref(), Some("s"));
    assert!(
        detail.contains("milliseconds") && detail.contains("s=1763752500000"),
        "{detail}"
    );
    assert_eq!(m.instant("t").unwrap(), Some(Timestamp::from_millis(MIN_MILLIS)));
    assert!(m.instant("u").is_err());
    let m = q("a=true&b=FALSE&c=1&d=yes&e=");
    assert_eq!(m.boolean("a").unwrap(), Some(true));
    assert_eq!(m.boolean("b").unwrap(), Some(false));
    assert_eq!(m.boolean("c").unwrap(), Some(true));
    assert_eq!(err(m.boolean("d")).1, "d must be true or false");
    assert!(m.boolean("e").is_err());
}

#[test]
fn enums_and_text() {
    let m = q("c=red&d=Red&e=&t=%20%20&u=+btc+");
    assert_eq!(m.one_of::<Color>("c").unwrap(), Some(Color::Red));
    assert_eq!(err(m.one_of::<Color>("d")).1, "d must be one of red or blue");
    assert!(m.one_of::<Color>("e").is_err());
    assert_eq!(err(m.text("t")).1, "t must not be empty");
    assert_eq!(err(q("q=a%00b").text("q")).1, "q must not contain control characters");
    // The bound the message names is the parser's.
    assert!(q("c=999999999999.9999").cents_ceil("c").is_ok());
    for bad in ["1000000000000", "1e300"] {
        let message = err(q(&format!("c={bad}")).cents_ceil("c")).1;
        assert!(message.contains(&format!("below {CENTS_BOUND}")), "{bad}: {message}");
    }
    assert_eq!(m.text("u").unwrap().as_deref(), Some("btc"));
    let long = format!("q={}", "x".repeat(MAX_TEXT_LEN + 1));
    assert!(q(&long).text("q").is_err());
    let (p, d) = err(q("").required_text("q"));
    assert_eq!((p.as_deref(), d.as_str()), (Some("q"), "q is required"));
}

impl ParamDefault for Color {
    const DEFAULT: Self = Color::Blue;
}

impl PartialSchema for Color {
    fn schema() -> RefOr<Schema> {
        enum_schema::<Color>()
    }
}

fn schema<T: PartialSchema>() -> Value {
    serde_json::to_value(T::schema()).unwrap()
}

/// Each typed parameter documents the bounds and the default it reads with: the largest documented value
/// is read, one more is refused, and absent reads as the documented default.
#[test]
fn typed_parameters_document_what_they_read() {
    fn check<T: Param + PartialSchema + std::fmt::Debug>(name: &str, as_int: impl Fn(T) -> i64) {
        let s = schema::<T>();
        let (min, max) = (s["minimum"].as_i64().unwrap(), s["maximum"].as_i64().unwrap());
        assert_eq!(
            as_int(q("").get::<T>(name).unwrap()),
            s["default"].as_i64().unwrap(),
            "{s}"
        );
        assert_eq!(as_int(q(&format!("{name}={max}")).get::<T>(name).unwrap()), max, "{s}");
        assert_eq!(as_int(q(&format!("{name}={min}")).get::<T>(name).unwrap()), min, "{s}");
        let (_, detail) = err(q(&format!("{name}={}", max + 1)).get::<T>(name));
        assert_eq!(detail, format!("{name} must be an integer from {min} to {max}"));
        assert!(q(&format!("{name}={}", min - 1)).get::<T>(name).is_err(), "{s}");
    }
    check::<Limit<30, 100>>("limit", |l| l.get().into());
    check::<Offset>("offset", |o| o.get().into());
    check::<Int<1, 86_400, 30>>("max_staleness_seconds", Int::get);
    assert_eq!(
        schema::<Limit<30, 100>>()["minimum"],
        Value::from(Limit::<30, 100>::MIN)
    );

    let flag = schema::<Flag<false>>();
    assert_eq!(
        (flag["type"].as_str(), flag["default"].as_bool()),
        (Some("boolean"), Some(false))
    );
    assert_eq!(q("").get::<Flag<false>>("orderbook").unwrap(), Flag(false));
    assert_eq!(q("orderbook=true").get::<Flag<false>>("orderbook").unwrap(), Flag(true));

    let text = schema::<Text>();
    assert_eq!(text["maxLength"], Value::from(MAX_TEXT_LEN), "{text}");
    assert_eq!(text["minLength"], Value::from(1), "{text}");
    let longest = "x".repeat(MAX_TEXT_LEN);
    assert_eq!(q(&format!("q={longest}")).get::<Text>("q").unwrap().0, longest);
    assert!(q(&format!("q={longest}x")).get::<Option<Text>>("q").is_err());
    assert_eq!(q("").get::<Option<Text>>("q").unwrap(), None);
    assert_eq!(err(q("").get::<Text>("q")).1, "q is required");

    // An enum's documented values are the ones it reads, and its default is one of them.
    let color = schema::<Defaulted<Color>>();
    assert_eq!(color["enum"], json!(["red", "blue"]), "{color}");
    assert_eq!(color["default"], "blue", "{color}");
    assert_eq!(q("").get::<Defaulted<Color>>("c").unwrap(), Defaulted(Color::Blue));
    assert_eq!(q("c=red").get::<Defaulted<Color>>("c").unwrap(), Defaulted(Color::Red));
    assert_eq!(q("c=red").get::<Option<Color>>("c").unwrap(), Some(Color::Red));
    assert_eq!(
        err(q("c=green").get::<Defaulted<Color>>("c")).1,
        "c must be one of red or blue"
    );
}

#[test]
fn cross_parameter_checks() {
    assert!(check_order("start_time", Some(2), "end_time", Some(1)).is_err());
    assert!(check_order("start_time", Some(1), "end_time", Some(1)).is_ok());
    assert!(check_order::<i64>("start_time", None, "end_time", Some(1)).is_ok());
    let (p, _) = err(check_together("start_time", &Some(1), "end_time", &None::<i64>));
    assert_eq!(p.as_deref(), Some("start_time"));
    let (p, _) = err(check_together("start_time", &None::<i64>, "end_time", &Some(1)));
    assert_eq!(p.as_deref(), Some("end_time"));
}
