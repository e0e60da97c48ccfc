package platform

// RestrictsNames says that this system cannot hold every name a checkpoint made elsewhere may
// (WindowsBadNames): a restore checks them first.
const RestrictsNames = true
