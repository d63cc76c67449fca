module k8s.io/ktesting
