//! The permuted tables of Manku, Jain and Das Sarma: which blocks lead in each table
//! ([`permutation`]), and the sorted keys of every table, built with a radix sort ([`radix`],
//! [`sorted_tables`]).
//!
//! Depends on [`crate::format`] (the settings).

pub(crate) mod permutation;
pub(crate) mod radix;
pub(crate) mod sorted_tables;
