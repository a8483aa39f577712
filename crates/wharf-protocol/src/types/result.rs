//! The members every 2026-07-28 result carries (`resultType`, `_meta`, and on cacheable results
//! `ttlMs` and `cacheScope`), declared once for every result type, and the trait Wharf sets them
//! through.

use crate::types::common::{CacheScope, JsonObject, ResultType};

/// The members Wharf sets on a result before sending it.
pub trait ResultMembers {
    /// Sets `resultType`.
    fn set_result_type(&mut self, result_type: ResultType);

    /// The result's `_meta` object, when it has one.
    fn meta_mut(&mut self) -> Option<&mut JsonObject>;

    /// Sets the cache hints `ttlMs` and `cacheScope`; results that carry none ignore them.
    fn set_cache_hints(&mut self, _ttl_ms: u64, _scope: CacheScope) {}
}

/// Declares a result struct with its own fields followed by the members every result carries,
/// and implements [`ResultMembers`] for it.
///
/// A struct marked `#[cacheable]` (after its doc comment) also carries the cache hints. serde
/// writes fields in the order they are declared, so the shared members are declared after the
/// struct's own, cache hints first: the order every result has always been written in. Every
/// struct derives `Debug`, `Clone`, `Default`, `PartialEq`, `Serialize` and `Deserialize`; the
/// macro takes doc comments on the struct, no other attributes.
macro_rules! result_struct {
    (
        @declare
        $(#[doc = $doc:literal])*
        $name:ident { $($fields:tt)* }
        impl { $($cache_hints_setter:tt)* }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Default, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
        pub struct $name {
            $($fields)*
            /// `"complete"` on 2026-07-28; absent before.
            #[serde(rename = "resultType", default, skip_serializing_if = "Option::is_none")]
            pub result_type: Option<$crate::types::common::ResultType>,
            /// Result metadata.
            #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
            pub meta: Option<$crate::types::common::JsonObject>,
        }

        impl $crate::types::result::ResultMembers for $name {
            fn set_result_type(&mut self, result_type: $crate::types::common::ResultType) {
                self.result_type = Some(result_type);
            }

            fn meta_mut(&mut self) -> Option<&mut $crate::types::common::JsonObject> {
                self.meta.as_mut()
            }

            $($cache_hints_setter)*
        }
    };
    (
        $(#[doc = $doc:literal])*
        #[cacheable]
        pub struct $name:ident { $($fields:tt)* }
    ) => {
        $crate::types::result::result_struct! {
            @declare
            $(#[doc = $doc])*
            $name {
                $($fields)*
                /// How long the result may be cached, in milliseconds (2026-07-28).
                #[serde(rename = "ttlMs", default, skip_serializing_if = "Option::is_none")]
                pub ttl_ms: Option<u64>,
                /// Who may reuse a cached result (2026-07-28).
                #[serde(rename = "cacheScope", default, skip_serializing_if = "Option::is_none")]
                pub cache_scope: Option<$crate::types::common::CacheScope>,
            }
            impl {
                fn set_cache_hints(&mut self, ttl_ms: u64, scope: $crate::types::common::CacheScope) {
                    self.ttl_ms = Some(ttl_ms);
                    self.cache_scope = Some(scope);
                }
            }
        }
    };
    (
        $(#[doc = $doc:literal])*
        pub struct $name:ident { $($fields:tt)* }
    ) => {
        $crate::types::result::result_struct! {
            @declare
            $(#[doc = $doc])*
            $name { $($fields)* }
            impl {}
        }
    };
}

pub(crate) use result_struct;

result_struct! {
    /// A result with no members besides `_meta` and `resultType`, as `ping` answers.
    pub struct EmptyResult {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::tools::ListToolsResult;

    #[test]
    fn shared_members_come_after_a_results_own_and_cache_hints_before_the_rest() {
        let mut result = ListToolsResult { meta: Some(JsonObject::new()), ..ListToolsResult::default() };
        result.set_result_type(ResultType::complete());
        result.set_cache_hints(60_000, CacheScope::Private);
        result.meta_mut().expect("the result has a `_meta`").insert("k".to_owned(), "v".into());
        assert_eq!(
            serde_json::to_string(&result).unwrap(),
            r#"{"tools":[],"ttlMs":60000,"cacheScope":"private","resultType":"complete","_meta":{"k":"v"}}"#
        );
    }

    #[test]
    fn results_without_cache_hints_ignore_them_and_a_missing_meta_stays_missing() {
        let mut result = EmptyResult::default();
        result.set_cache_hints(60_000, CacheScope::Public);
        assert!(result.meta_mut().is_none());
        result.set_result_type(ResultType::complete());
        assert_eq!(serde_json::to_string(&result).unwrap(), r#"{"resultType":"complete"}"#);
        assert_eq!(serde_json::to_string(&EmptyResult::default()).unwrap(), "{}");
    }
}
