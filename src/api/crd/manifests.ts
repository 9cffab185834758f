// placeholder replaced by the generator in this session
export const renderCrds = (): string => ""
