//! The TCP variants' tunable constants: [`Tunable`] (a variant's keys, declared once in its
//! file, and the algorithm built with their values) and [`cc_constants!`], which the registry
//! ([`super::cc_registry!`]) expands into `CcParams`, `AnyCc::new` and the variants' keys.

use crate::params::{KeyError, Param, Table};

/// A variant's tunable constants (CUBIC's C and β, DCTCP's g, BBR's gains): its keys, declared
/// once as `Decl`s in the algorithm's file with the published constants as defaults, and the
/// algorithm built with them. A scenario gives them in `tcp.cc.VARIANT`.
pub trait Tunable: Sized {
    /// The constants' values; `Default` is the declared defaults (a test checks they agree).
    type Params: Clone + std::fmt::Debug + PartialEq + Default + serde::Serialize;
    /// Its keys (none for Reno).
    const PARAMS: &'static [Param] = &[];
    /// Reads the constants of a `tcp.cc.VARIANT` table (the declared default for each key it
    /// does not give), each checked against its declared range.
    fn read(t: &Table) -> Result<Self::Params, KeyError>;
    /// The algorithm in its initial state, with these constants.
    fn with_params(p: &Self::Params) -> Self;
}

/// The constants of a variant that has none.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct NoParams {}

/// [`cc_registry!`]'s constants: [`CcParams`], [`AnyCc::new`] and the variants' keys.
macro_rules! cc_constants {
    ($($name:literal => $variant:ident($ty:ty),)+) => {
        /// A variant's constants ([`Tunable`]), serialised as its own keys.
        #[derive(Debug, Clone, PartialEq, serde::Serialize)]
        #[serde(untagged)]
        pub enum CcParams {
            $($variant(<$ty as Tunable>::Params),)+
        }

        impl CcParams {
            /// The declared defaults of `variant`'s constants.
            pub fn defaults(variant: TcpVariant) -> CcParams {
                match variant { $(TcpVariant::$variant => CcParams::$variant(Default::default()),)+ }
            }
            /// `variant`'s constants read from a `tcp.cc.VARIANT` table.
            pub fn read(variant: TcpVariant, t: &Table) -> Result<CcParams, KeyError> {
                Ok(match variant { $(TcpVariant::$variant => CcParams::$variant(<$ty as Tunable>::read(t)?),)+ })
            }
            /// Whether these are the declared defaults.
            pub fn is_default(&self) -> bool {
                match self { $(CcParams::$variant(p) => *p == Default::default(),)+ }
            }
        }

        impl AnyCc {
            /// `variant`'s algorithm with the constants `params` (its defaults when `None` or
            /// another variant's).
            pub fn new(variant: TcpVariant, params: Option<&CcParams>) -> AnyCc {
                let defaults = CcParams::defaults(variant);
                let p = match params {
                    Some(p) if std::mem::discriminant(p) == std::mem::discriminant(&defaults) => p,
                    _ => &defaults,
                };
                match p { $(CcParams::$variant(p) => AnyCc::$variant(<$ty as Tunable>::with_params(p)),)+ }
            }
        }

        impl TcpVariant {
            /// The variant named `name`.
            pub fn from_name(name: &str) -> Option<TcpVariant> {
                match name { $($name => Some(TcpVariant::$variant),)+ _ => None }
            }
            /// The keys of its tunable constants (`tcp.cc.NAME`).
            pub fn constants(self) -> &'static [Param] {
                match self { $(TcpVariant::$variant => <$ty as Tunable>::PARAMS,)+ }
            }
        }
    };
}
