//! A venue's public web address read back into the event it shows: the inverse of the `url` fields the
//! connectors write (venue_a series pages, venue_b event pages), for adding a watchlist event by its URL.
//!
//! - venue_a: `https://kalshi.com/markets/{series}[/{title-slug}]/{event-ticker}`. The event ticker is the
//!   last path segment, upper-cased, when it belongs to the series (`KXBTCD-25NOV2117` under `kxbtcd`); a
//!   series page alone names no event.
//! - venue_b: `https://polymarket.com/event/{event-slug}[/{market-slug}]`: the event's slug, which the catalog
//!   and the venue both accept in place of its id.

use crossbook_core::Exchange;

/// Why an address names no event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("url must be a web address, such as polymarket.com/event/{{slug}}")]
    NotAUrl,
    #[error("url must be an event page of venue_a (kalshi.com/markets/…) or venue_b (polymarket.com/event/…)")]
    OtherSite,
    #[error("url is the venue_a series page {series}, not one of its events: open the event and copy its address")]
    SeriesOnly { series: String },
    #[error("url is not an event page: {0}")]
    NotAnEvent(&'static str),
}

/// The venue and the event id (venue_a ticker) or slug (venue_b) an address names.
pub fn event_of_url(raw: &str) -> Result<(Exchange, String), UrlError> {
    let raw = raw.trim();
    // An address copied without its scheme (`polymarket.com/event/…`) is the https page.
    let with_scheme = if raw.contains("://") {
        raw.to_string()
    } else {
        format!("https://{raw}")
    };
    let url = url::Url::parse(&with_scheme).map_err(|_| UrlError::NotAUrl)?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err(UrlError::NotAUrl);
    }
    let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host);
    let segments: Vec<&str> = url
        .path_segments()
        .map(|s| s.filter(|p| !p.is_empty()).collect())
        .unwrap_or_default();
    match host {
        "kalshi.com" => {
            let ["markets", series, rest @ ..] = segments.as_slice() else {
                return Err(UrlError::NotAnEvent(
                    "venue_a event pages start with /markets/{series}/",
                ));
            };
            let series = series.to_ascii_uppercase();
            let Some(last) = rest.last() else {
                return Err(UrlError::SeriesOnly { series });
            };
            let ticker = last.to_ascii_uppercase();
            if !ticker.starts_with(&format!("{series}-")) {
                return Err(UrlError::NotAnEvent(
                    "the last part of a venue_a event page is its event ticker",
                ));
            }
            Ok((Exchange::VenueA, ticker))
        }
        "polymarket.com" => match segments.as_slice() {
            ["event", slug, ..] => Ok((Exchange::VenueB, (*slug).to_string())),
            _ => Err(UrlError::NotAnEvent("venue_b event pages are /event/{slug}")),
        },
        _ => Err(UrlError::OtherSite),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_pages_name_their_event() {
        let ok = |u: &str| event_of_url(u).unwrap();
        assert_eq!(
            ok("https://kalshi.com/markets/kxbtcd/bitcoin-price-abovebelow/kxbtcd-25nov2117"),
            (Exchange::VenueA, "KXBTCD-25NOV2117".into())
        );
        assert_eq!(
            ok("https://www.kalshi.com/markets/kxbtc15m/kxbtc15m-26nov211915?ref=x"),
            (Exchange::VenueA, "KXBTC15M-26NOV211915".into())
        );
        assert_eq!(
            ok("https://polymarket.com/event/btc-updown-15m-1778583600"),
            (Exchange::VenueB, "btc-updown-15m-1778583600".into())
        );
        assert_eq!(
            ok("  https://polymarket.com/event/fed-decision/will-the-fed-cut#top "),
            (Exchange::VenueB, "fed-decision".into())
        );
        assert_eq!(
            ok("kalshi.com/markets/kxw/kxw-26nov25"),
            (Exchange::VenueA, "KXW-26NOV25".into())
        );
    }

    #[test]
    fn other_addresses_say_why_they_name_no_event() {
        let err = |u: &str| event_of_url(u).unwrap_err();
        assert_eq!(err("not a url"), UrlError::NotAUrl);
        assert_eq!(err("ftp://kalshi.com/markets/x"), UrlError::NotAUrl);
        assert_eq!(err("https://example.com/event/x"), UrlError::OtherSite);
        assert_eq!(
            err("https://kalshi.com/markets/kxbtcd"),
            UrlError::SeriesOnly {
                series: "KXBTCD".into()
            }
        );
        assert!(matches!(
            err("https://kalshi.com/markets/kxbtcd/kxeth-1"),
            UrlError::NotAnEvent(_)
        ));
        assert!(matches!(err("https://kalshi.com/portfolio"), UrlError::NotAnEvent(_)));
        assert!(matches!(
            err("https://polymarket.com/markets/crypto"),
            UrlError::NotAnEvent(_)
        ));
    }
}
