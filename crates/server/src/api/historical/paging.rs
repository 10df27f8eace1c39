//! Reading a page: one or two books from the cursor on, merged in the route's order and cut at `limit`.

use std::cmp::Reverse;

use crossbook_core::{Exchange, Market, Outcome, Timestamp, history};
use crossbook_store::{
    BookHistoryQuery, HistoryWindow,
    books::history::{HistoryRow, book_history},
};

use crate::{
    AppState,
    error::{ApiError, ApiResult},
};

use super::{
    cursor::Cursor,
    out::PaginationOut,
    params::{Common, FormatName},
};

/// One book a page reads from: its token (none on venue_a) and its rank among the market's books.
#[derive(Debug, Clone)]
pub(super) struct Book {
    pub(super) asset_id: Option<String>,
    pub(super) rank: u8,
}

/// A page of rows from one or two books, merged in the route's order.
pub(super) struct Page {
    pub(super) rows: Vec<(u8, HistoryRow)>,
    pub(super) next: Option<Cursor>,
}

/// The query a page answers, for the cursor binding.
pub(super) fn binding(
    route: &str,
    market: &Market,
    asset: Option<&str>,
    c: &Common,
    format: Option<FormatName>,
) -> String {
    let range = match c.range {
        Some((s, e)) => format!(
            "{}-{}/{}",
            s.millis(),
            e.millis(),
            history::Granularity::from(c.granularity).as_str()
        ),
        None => "latest".to_string(),
    };
    let format = match format {
        Some(FormatName::Interval) => "interval",
        Some(FormatName::Unified) => "unified",
        None => "-",
    };
    format!(
        "{route}|{}|{}|{}|{range}|{format}",
        market.exchange.as_str(),
        market.market_id,
        asset.unwrap_or("-")
    )
}

/// Reads one page: `limit + 1` rows of each book from the cursor on, merged, cut at `limit`.
pub(super) async fn read_page(
    state: &AppState,
    market: &Market,
    books: &[Book],
    c: &Common,
    cursor: Option<Cursor>,
) -> ApiResult<Page> {
    let granularity = history::Granularity::from(c.granularity);
    let mut rows: Vec<(u8, HistoryRow)> = Vec::new();
    for book in books {
        // Rows of a book ranked after the cursor's book may still sit at the cursor's own position.
        let later = cursor.is_some_and(|k| book.rank > k.rank);
        let window = match c.range {
            None => HistoryWindow::Latest {
                before: cursor.map(|k| Timestamp::from_millis(if later { k.pos.saturating_add(1) } else { k.pos })),
            },
            // The store resumes after the bucket holding `after`: the cursor's bucket itself, or the one before.
            Some((start, end)) => HistoryWindow::Range {
                start,
                end,
                bucket_ms: granularity.millis(),
                after: cursor.map(|k| {
                    let first = granularity.bucket_start(k.pos).millis();
                    Timestamp::from_millis(if later { first.saturating_sub(1) } else { first })
                }),
            },
        };
        let q = BookHistoryQuery {
            exchange: market.exchange,
            market_id: market.market_id.clone(),
            asset_id: book.asset_id.clone(),
            window,
            limit: c.limit + 1,
        };
        rows.extend(
            book_history(state.store.as_ref(), &q)
                .await?
                .into_iter()
                .map(|r| (book.rank, r)),
        );
    }
    let position = |r: &HistoryRow| match c.range {
        None => r.snapshot.timestamp.millis(),
        Some(_) => granularity.bucket_of(r.snapshot.timestamp),
    };
    match c.range {
        None => rows.sort_by_key(|(rank, r)| (Reverse(r.snapshot.timestamp), *rank)),
        Some(_) => rows.sort_by_key(|(rank, r)| (position(r), *rank)),
    }
    let has_more = rows.len() > c.limit as usize;
    rows.truncate(c.limit as usize);
    let next = if has_more {
        rows.last().map(|(rank, s)| Cursor {
            pos: position(s),
            rank: *rank,
        })
    } else {
        None
    };
    Ok(Page { rows, next })
}

pub(super) fn pagination(c: &Common, count: usize, next: Option<Cursor>, binding: &str) -> PaginationOut {
    PaginationOut {
        limit: c.limit,
        count,
        has_more: next.is_some(),
        pagination_key: next.map(|k| k.encode(binding)),
    }
}

pub(super) async fn market_of(state: &AppState, exchange: Exchange, market_id: &str) -> ApiResult<Market> {
    state
        .store
        .get_market(exchange, market_id)
        .await?
        .map(|m| m.market)
        .ok_or_else(|| ApiError::not_found(format!("unknown market_id {market_id} on {exchange}")))
}

pub(super) fn cursor_of(c: &Common, binding: &str) -> ApiResult<Option<Cursor>> {
    c.pagination_key
        .as_deref()
        .map(|k| Cursor::decode(k, binding))
        .transpose()
}

/// The venue_b tokens of `market` to read, YES first; `asset_id` narrows to one (404 when it is not a token
/// of the market).
pub(super) fn venue_b_books(market: &Market, asset_id: Option<&str>) -> ApiResult<Vec<(Book, Outcome)>> {
    let tokens = [
        (market.yes_token_id.as_deref(), Outcome::Yes, 0u8),
        (market.no_token_id.as_deref(), Outcome::No, 1u8),
    ];
    let books: Vec<(Book, Outcome)> = tokens
        .into_iter()
        .filter_map(|(token, outcome, rank)| Some((token?, outcome, rank)))
        .filter(|(token, _, _)| asset_id.is_none_or(|a| a == *token))
        .map(|(token, outcome, rank)| {
            (
                Book {
                    asset_id: Some(token.to_string()),
                    rank,
                },
                outcome,
            )
        })
        .collect();
    if let Some(a) = asset_id
        && books.is_empty()
    {
        return Err(ApiError::not_found(format!(
            "asset_id {a} is not a token of market {}",
            market.market_id
        )));
    }
    Ok(books)
}
