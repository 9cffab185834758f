export const description =
  "Pre-pulls container images onto Kubernetes nodes (ImagePullJob, ImageListPullJob, NodeImage of apps.kruise.io/v1alpha1)."
