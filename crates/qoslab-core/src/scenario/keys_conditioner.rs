//! The keys of `[[conditioner]]`, each declared once (see [`super::keys`]); the meter's own
//! keys are its kind's ([`crate::conditioner::MeterSpec`]).

use super::keys::COUNT as GROUP;
use crate::params::typed::{Decl, Text, Word};
use crate::params::{Param, ParamKind};

const NAME_KIND: ParamKind = ParamKind::Name;

pub const NAME: Decl<Text> = Decl::new(
    "name",
    NAME_KIND,
    "\"condN\"",
    "Conditioner name; `{i}` in groups.",
);
pub const COUNT: Decl<u32> = GROUP.with_doc("A group of `count` conditioners written once.");
pub const LINK: Decl<Text> = Decl::new(
    "link",
    NAME_KIND,
    "required",
    "The link whose queue it guards.",
);
pub const DIRECTION: Decl<Word> = Decl::new(
    "direction",
    ParamKind::Choice {
        choices: &["ab", "ba"],
    },
    "ab",
    "The guarded direction.",
);
pub const CLASSIFY: Decl<Text> = Decl::new(
    "classify",
    NAME_KIND,
    "any",
    "\"any\", \"flow:NAME\", \"src:NODE\", \"dst:NODE\" or \"dscp:CODEPOINT\".",
);
pub const METER: Param = Param::new(
    "meter",
    ParamKind::Tables { params: &[] },
    "required",
    "The meter/marker (a meter table).",
);
/// Its default is the meter kind's ([`crate::conditioner::MeterInfo::scope`]).
pub const SCOPE: Decl<Word> = Decl::new(
    "scope",
    ParamKind::Choice {
        choices: &["per_flow", "aggregate"],
    },
    "per_flow (aggregate for arm, ard, twam)",
    "One meter per flow, or one for all selected traffic.",
);
pub const GREEN: Decl<Text> = Decl::new(
    "green",
    NAME_KIND,
    "AF11",
    "Action for green: a codepoint to write, \"keep\" or \"drop\".",
);
pub const YELLOW: Decl<Text> = Decl::new("yellow", NAME_KIND, "AF12", "Action for yellow.");
/// Its default is AF13 but for the meter kinds whose red drops
/// ([`crate::conditioner::MeterInfo::red_drops`]).
pub const RED: Decl<Text> = Decl::new(
    "red",
    NAME_KIND,
    "AF13 (drop for arm, ard)",
    "Action for red.",
);

/// `[[conditioner]]`.
pub const CONDITIONER: &[Param] = &[
    NAME.param,
    COUNT.param,
    LINK.param,
    DIRECTION.param,
    CLASSIFY.param,
    METER,
    SCOPE.param,
    GREEN.param,
    YELLOW.param,
    RED.param,
];
