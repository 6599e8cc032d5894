//! Why the relay answers itself instead of passing on the point service's answer: in
//! envelope B, as the point routes refuse (DESIGN.md, "Topology": 504
//! `POINT_SERVICE_TIMEOUT`, 502 `POINT_SERVICE_UNAVAILABLE`).

envelope::refusals! {
    /// The relay's own answers; each message is written here only.
    pub enum RelayRefusal in B {
        /// No answer within the route's wait (`crate::config::RelayWaits`): the point service
        /// may have acted.
        TimedOut => 504 "POINT_SERVICE_TIMEOUT",
            "Point service did not respond in time; the request outcome is unknown";
        /// Refused, reset, DNS: the error and its causes on one line.
        Unavailable(error: String) => 502 "POINT_SERVICE_UNAVAILABLE", "Point service unavailable: {error}";
        /// The request target cannot go to the point service byte for byte, so it is not
        /// relayed at all.
        Target => 400 "VALIDATION_ERROR", "Request target cannot be relayed unchanged";
    }
}
