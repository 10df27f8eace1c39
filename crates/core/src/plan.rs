//! Customer plans. Plans are ordered: a higher plan unlocks everything a lower one does.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

/// A customer's plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = PlanName, description = "A plan name as it appears in `required_plan`."))]
pub enum Plan {
    Free,
    Builder,
    Trader,
}

impl Plan {
    pub const ALL: [Plan; 3] = [Plan::Free, Plan::Builder, Plan::Trader];

    pub fn as_str(self) -> &'static str {
        match self {
            Plan::Free => "free",
            Plan::Builder => "builder",
            Plan::Trader => "trader",
        }
    }
    /// The name used in messages ("requires the Trader plan").
    pub fn display_name(self) -> &'static str {
        match self {
            Plan::Free => "Free",
            Plan::Builder => "Builder",
            Plan::Trader => "Trader",
        }
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Plan {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "free" => Ok(Plan::Free),
            "builder" => Ok(Plan::Builder),
            "trader" => Ok(Plan::Trader),
            other => Err(format!("unknown plan {other:?} (expected free, builder or trader)")),
        }
    }
}
