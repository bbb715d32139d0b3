//! Unit tests of the orders.
