//! The route groups of contracts §3: every route belongs to one. What each group requires is in the plans
//! table ([`RouteGroup::access`], in [`super::plans`]).

/// Declares the route groups once: the [`RouteGroup`] enum, [`RouteGroup::ALL`] in this order, and a
/// marker type per group in [`groups`].
macro_rules! route_groups {
    ($($(#[$m:meta])* $name:ident),* $(,)?) => {
        /// The route groups of contracts §3. [`RouteGroup::access`] is the table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum RouteGroup {
            $($(#[$m])* $name,)*
        }

        impl RouteGroup {
            /// Every group, in the order of contracts §3.
            pub const ALL: [RouteGroup; [$(RouteGroup::$name),*].len()] = [$(RouteGroup::$name),*];
        }

        /// Zero-sized markers naming a [`RouteGroup`] in a type, for [`Gate<G>`](crate::access::Gate).
        pub mod groups {
            use super::RouteGroup;

            /// A type that names a route group.
            pub trait Group: Send + Sync + 'static {
                const GROUP: RouteGroup;
            }

            $(
                $(#[$m])*
                #[derive(Debug, Clone, Copy)]
                pub struct $name;
                impl Group for $name {
                    const GROUP: RouteGroup = RouteGroup::$name;
                }
            )*
        }
    };
}

route_groups!(
    /// Search; public.
    Search,
    /// Public whale feed and catalog; preview below Builder.
    PublicWhales,
    /// Arbitrage history; preview below Trader.
    ArbitrageHistory,
    /// Historical order books.
    Historical,
    /// Current arbitrage.
    ArbitrageCurrent,
    /// Price spread (`/v1/arbitrage/current/difference`).
    PriceSpread,
    /// Personal whale routes (watchlist, user feed, stats).
    PersonalWhales,
    /// Webhooks: GET, DELETE, list (and the deliveries log).
    WebhooksRead,
    /// Webhooks: POST, PUT of type `whale` (and its test delivery).
    WebhooksWriteWhale,
    /// Webhooks: POST, PUT of type `arbitrage` (and its test delivery).
    WebhooksWriteArbitrage,
    /// Backtests: run, read and list.
    Backtests,
);

impl RouteGroup {
    /// The group of a webhook POST/PUT, by webhook type (`whale` or `arbitrage`).
    pub fn webhook_write(is_arbitrage: bool) -> RouteGroup {
        if is_arbitrage {
            RouteGroup::WebhooksWriteArbitrage
        } else {
            RouteGroup::WebhooksWriteWhale
        }
    }

    /// How the group is described in the API reference.
    pub fn label(self) -> &'static str {
        match self {
            RouteGroup::Search => "search",
            RouteGroup::PublicWhales => "public whale feed and catalog",
            RouteGroup::ArbitrageHistory => "arbitrage history",
            RouteGroup::Historical => "historical orderbooks",
            RouteGroup::ArbitrageCurrent => "arbitrage current",
            RouteGroup::PriceSpread => "price spread (/current/difference)",
            RouteGroup::PersonalWhales => "personal whale routes",
            RouteGroup::WebhooksRead => "webhooks: GET, DELETE, list",
            RouteGroup::WebhooksWriteWhale => "webhooks: POST, PUT whale",
            RouteGroup::WebhooksWriteArbitrage => "webhooks: POST, PUT arbitrage",
            RouteGroup::Backtests => "backtests",
        }
    }
}
