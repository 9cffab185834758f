export const description =
  "Pre-pulls container images onto Kubernetes nodes (ImagePullJob, ImageListPullJob and NodeImage of apps.kruise.io " +
  "v1alpha1 and v1beta1, AdvancedCronJob of apps.kruise.io/v1alpha1)."
